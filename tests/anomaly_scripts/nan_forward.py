"""nan-in-forward (with --check-forward): log of a negative number."""

import engine

x = engine.tensor([-1.0, 2.0], requires_grad=True)
y = x * 3
z = y.log()  # mark: culprit
loss = z.sum()
loss.backward()
