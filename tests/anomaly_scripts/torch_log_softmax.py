"""inf-in-backward: log of a softmax with a sharp temperature, which rounds some probabilities to 0."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(10, 5)
X, y = torch.randn(64, 10), torch.randint(0, 5, (64,))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    optimizer.zero_grad()
    probs = torch.softmax(model(X) / 0.01, dim=1)
    loss = -torch.log(probs[torch.arange(64), y]).mean()  # mark: log
    loss.backward()  # mark: backward
    optimizer.step()
