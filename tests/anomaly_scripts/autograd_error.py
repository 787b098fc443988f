"""autograd-error: backward on a tensor that does not require grad."""

import engine

x = engine.tensor([1.0, 2.0])
loss = (x * 2).sum()
loss.backward()  # mark: culprit
