"""The seed's in-place example: `b` is saved by `b * b`, then modified before backward.

gradcli anomaly examples/script.py
"""

import engine as torch

a = torch.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
loss = (b * b).mean()
b[0] = 1000.0
loss.backward()
print(a.grad)
