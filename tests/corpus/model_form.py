"""The `model` + `inputs` form: float32 parameters found through named_parameters()."""

import engine
from engine.autograd import Function


class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = engine.tanh(x)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        y = engine.tanh(x)
        return grad * (1 - y * y)


class Layer:
    def __init__(self, n_in, n_out):
        self.weight = engine.randn(n_in, n_out, requires_grad=True)
        self.bias = engine.zeros(n_out, requires_grad=True)

    def named_parameters(self):
        return [("weight", self.weight), ("bias", self.bias)]


class TinyNet:
    def __init__(self):
        self.hidden = Layer(3, 4)
        self.out = Layer(4, 1)
        self.scale = 2.0

    def named_parameters(self):
        for prefix, layer in (("hidden", self.hidden), ("out", self.out)):
            for name, p in layer.named_parameters():
                yield f"{prefix}.{name}", p

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def __call__(self, x, scale):
        h = Tanh.apply(x @ self.hidden.weight + self.hidden.bias)
        return (h @ self.out.weight + self.out.bias) * scale


model = TinyNet()
inputs = (engine.randn(5, 3), 0.5)  # x does not require grad: only the parameters are checked
