"""inf-in-backward: the gradient of sqrt at 0 is inf (torch would carry on)."""

import engine

x = engine.tensor([0.0, 4.0], requires_grad=True)
loss = x.sqrt().sum()  # mark: culprit
loss.backward()  # mark: backward
