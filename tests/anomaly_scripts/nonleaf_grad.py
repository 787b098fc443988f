"""nonleaf-grad-read: l1 is not a leaf and does not retain its grad."""

import engine

w = engine.tensor(2.0, requires_grad=True)
l1 = engine.ones(2, 2) * w  # mark: created
loss = (l1 * 3).mean()
loss.backward()
print(l1.grad)  # mark: culprit
