"""implicit-grad-nonscalar: backward() on a vector without gradient=."""

import engine

x = engine.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2  # mark: created
y.backward()  # mark: culprit
