"""unused-parameter: w2's branch never reaches the loss."""

import engine

x = engine.randn(4, 3)
w1 = engine.randn(3, 2, requires_grad=True)
w2 = engine.randn(3, 2, requires_grad=True)  # mark: defined
h1 = x @ w1
h2 = x @ w2  # mark: culprit
loss = h1.pow(2).mean()
loss.backward()
