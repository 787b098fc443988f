"""unused-parameter on torch: a module's layer whose output never reaches the loss."""

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = torch.nn.Linear(3, 2)
        self.skipped = torch.nn.Linear(3, 2)

    def forward(self, x):
        self.skipped(x)  # mark: culprit
        return self.used(x)


model = Net()  # mark: defined
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    optimizer.zero_grad()
    loss = model(torch.randn(4, 3)).pow(2).sum()
    loss.backward()
    optimizer.step()
