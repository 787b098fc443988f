"""nan-in-backward on torch: where() masks log(0), but its gradient is 0 * inf = nan."""

import torch

x = torch.tensor([0.0, 4.0], requires_grad=True)
safe = torch.where(x > 0, torch.log(x), x)  # mark: culprit
loss = safe.sum()
loss.backward()  # mark: backward
