"""A small MLP's loss in PyTorch, drawn by `gradcli graph examples/torch/expr.py`.

Plain torch, no cases: `gradcli graph` draws `loss` (the top-level result nothing else uses),
naming the parameters after their module path (`model.0.weight`), the custom Function's node
as torch does (`ClampGradBackward`), and the hook on `hidden`.
"""

import torch
from torch import nn


class ClampGrad(torch.autograd.Function):
    """Identity forward; backward clips the gradient to [-1, 1]."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-1.0, 1.0)


model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
x = torch.randn(8, 3)
target = torch.randn(8, 1)

hidden = ClampGrad.apply(model[1](model[0](x)))
hidden.register_hook(lambda grad: grad * 0.5)
prediction = model[2](hidden)
loss = nn.functional.mse_loss(prediction, target)
