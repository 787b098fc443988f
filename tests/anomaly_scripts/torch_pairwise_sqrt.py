"""inf-in-backward: pairwise distances through sqrt, which is 0 on the diagonal."""

import torch

torch.manual_seed(0)
points = torch.randn(5, 2, requires_grad=True)
diff = points[:, None, :] - points[None, :, :]
dist = torch.sqrt((diff**2).sum(-1))  # mark: sqrt
loss = (1.0 - dist).clamp(min=0).sum()
loss.backward()  # mark: backward
