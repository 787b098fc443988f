"""NaN in backward: where() hides log(0) in the forward, not in the backward (0 * inf = nan)."""

import torch

x = torch.tensor([0.0, 1.0, 4.0], requires_grad=True)
safe_log = torch.where(x > 0, torch.log(x), torch.zeros_like(x))
loss = safe_log.sum()
loss.backward()
print(x.grad)
