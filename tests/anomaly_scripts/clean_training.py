"""A clean training loop: plain tensors, manual SGD under no_grad, zeroed grads."""

import sys

import engine

engine.manual_seed(0)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
x = engine.randn(32, 3)
true_w = engine.tensor([[1.0], [-2.0], [0.5]])
y = x @ true_w + 0.1

w = engine.zeros(3, 1, requires_grad=True)
b = engine.zeros(1, requires_grad=True)
for _ in range(steps):
    pred = x @ w + b
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with engine.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    w.grad.zero_()
    b.grad = None
print(f"final loss {loss.item():.4f}")
