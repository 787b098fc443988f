"""backward-twice: the second backward finds the graph freed by the first."""

import engine

x = engine.tensor([1.0, 2.0], requires_grad=True)
y = (x * x).sum()  # mark: forward
y.backward()  # mark: first
y.backward()  # mark: culprit
