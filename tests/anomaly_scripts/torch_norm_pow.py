"""inf-in-backward: a row norm written as a power 0.5, on a batch with a zero row (padding)."""

import torch

x = torch.randn(4, 3)
x[3] = 0.0  # padding
x.requires_grad_()
norms = (x**2).sum(1) ** 0.5  # mark: pow
loss = norms.mean()
loss.backward()  # mark: backward
