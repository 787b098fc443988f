"""grad-accumulation on torch: a training loop that never calls zero_grad()."""

import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 1)  # mark: defined
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 3)
for _ in range(4):
    loss = model(x).pow(2).mean()
    loss.backward()  # mark: culprit
    optimizer.step()
