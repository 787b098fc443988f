"""The classic: sigmoid saves its output for backward, and an in-place ReLU then overwrites it."""

import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
z = torch.nn.functional.relu(y, inplace=True)
loss = (z * x).sum()
loss.backward()
