"""leaf-inplace: a hand-written SGD step on a Sequential's first layer, without no_grad."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))  # mark: defined
X, y = torch.randn(16, 3), torch.randn(16, 1)
for _ in range(5):
    loss = ((model(X) - y) ** 2).mean()
    model.zero_grad()
    loss.backward()
    model[0].weight -= 0.1 * model[0].weight.grad  # mark: culprit
