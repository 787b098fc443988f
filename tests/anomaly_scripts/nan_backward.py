"""nan-in-backward: the gradient of sqrt at 0 is inf, times 0 gives nan."""

import engine

x = engine.tensor([0.0, 4.0], requires_grad=True)
y = x.sqrt()  # mark: culprit
loss = (y * 0.0).sum()
loss.backward()  # mark: backward
