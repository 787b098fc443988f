"""leaf-inplace on torch: a hand-written SGD step without torch.no_grad()."""

import torch

w = torch.ones(3, requires_grad=True)  # mark: defined
loss = (w * 2).sum()
loss.backward()
w -= 0.1 * w.grad  # mark: culprit
