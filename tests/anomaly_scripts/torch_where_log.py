"""nan-in-where-branch: a "safe" log of a ReLU output, masked with where() where it is 0."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1), nn.ReLU())
X, y = torch.randn(32, 4), torch.rand(32, 1) + 0.5
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    pred = model(X)
    log_pred = torch.where(pred > 0, torch.log(pred), torch.zeros_like(pred))  # mark: where
    loss = ((log_pred - torch.log(y)) ** 2).mean()
    loss.backward()  # mark: backward
    optimizer.step()
