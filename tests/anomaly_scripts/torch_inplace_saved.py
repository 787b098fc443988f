"""inplace-modified-saved on torch: sigmoid saves its output, an in-place ReLU overwrites it."""

import torch

x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
y = torch.sigmoid(x)  # mark: saved
z = torch.nn.functional.relu(y, inplace=True)  # mark: modified
loss = (z * x).sum()
loss.backward()  # mark: backward
