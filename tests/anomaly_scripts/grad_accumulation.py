"""grad-accumulation: seed 001's Tip1 without w.grad.zero_()."""

import engine

w = engine.tensor([1.0], requires_grad=True)  # mark: defined
x = engine.tensor([2.0], requires_grad=True)

for _ in range(4):
    a = engine.add(w, x)
    b = engine.add(w, 1)
    y = engine.mul(a, b)
    y.backward()  # mark: culprit
    print(w.grad)
