"""inplace-modified-saved inside a residual block of a ModuleList: the block's repr spans many lines."""

import torch
from torch import nn


class ResBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        h = torch.sigmoid(self.lin(x))  # mark: saved
        h += x  # mark: modified
        return h


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([ResBlock(4), ResBlock(4)])
        self.head = nn.Sequential(nn.Linear(4, 1))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()  # mark: backward
    optimizer.step()
