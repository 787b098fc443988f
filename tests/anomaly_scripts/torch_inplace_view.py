"""inplace-modified-saved on torch through a view: exp saves z, a slice of z is then changed."""

import torch

x = torch.tensor([0.5, 1.5, 2.0], requires_grad=True)
z = (x * 2).exp()  # mark: saved
head = z[:2]
s = z.sum()
head.mul_(3)  # mark: modified
z[2] = 0.0  # mark: modified again
s.backward()  # mark: backward
