"""backward-twice: the same loss backwarded twice (a second call left in while logging); nothing fed two losses."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
X, y = torch.randn(16, 3), torch.randn(16, 1)
out = model(X)
loss = ((out - y) ** 2).mean()
loss.backward()
print("loss", loss.item())
loss.backward()  # mark: culprit
