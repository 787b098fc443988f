"""inplace-modified-saved: y is saved by exp, then changed by add_ before backward."""

import engine

x = engine.tensor([0.5, 1.5], requires_grad=True)
y = x * 2
z = y.exp()  # mark: saved
s = z.sum()
z.add_(1)  # mark: modified
s.backward()  # mark: backward
