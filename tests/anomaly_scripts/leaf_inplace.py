"""leaf-inplace: an SGD step written without no_grad."""

import engine

w = engine.tensor([1.0, 2.0], requires_grad=True)  # mark: defined
loss = (w * w).sum()
loss.backward()
w.sub_(0.1 * w.grad)  # mark: culprit
