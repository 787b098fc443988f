"""no-grad-view-inplace: a view made under no_grad, then changed with grad mode on."""

import engine

w = engine.tensor([1.0, 2.0, 3.0], requires_grad=True)
with engine.no_grad():
    head = w[:2]  # mark: made
head.mul_(2)  # mark: culprit
