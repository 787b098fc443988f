"""The derivative table checks its rows by name, and conditional saving follows the names.

A row whose forward or formulas take other parameters than it declares must fail when the
table is built, not in a user's backward; and an input that alone requires grad must get
its gradient (the saved values its formula reads are saved because it names them).
"""

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import engine
import engine.nn.functional as F
from engine.ops import derivatives as D
from engine.ops.derivatives import row
from engine.ops.op import Op, RowError


def test_every_row_is_an_op_named_as_pytorch_names_nodes():
    ops = [v for v in vars(D).values() if isinstance(v, Op)]
    ops += [op for v in vars(D).values() if isinstance(v, dict) for op in v.values() if isinstance(op, Op)]
    assert len(ops) > 60
    for op in ops:
        name = op.node.__name__
        assert "Backward" in name or name.startswith("engine::autograd::"), name  # torch's NotImplemented


def test_a_well_formed_row_builds():
    op = row(
        "FooBackward0",
        lambda xp, self, other, alpha: self * other * alpha,
        inputs=("self", "other"),
        saves=("self", "other"),
        attrs=("alpha",),
        self=lambda m, g, self, other, alpha: g * other * alpha,
        other=lambda m, g, self, other, alpha: g * self * alpha,
    )
    assert op.node.__name__ == "FooBackward0"
    assert op.node.input_names == ("self", "other")
    assert [readers for _, readers in op.save_plan] == [(1,), (0,)]  # `self` is read by other's formula


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"forward": lambda xp, a, b: a * b},
            "the forward takes (xp, a, b), but the row declares (xp, self, other)",
        ),
        ({"self": lambda m, g, *args: g}, "formula for self: "),
        ({"self": lambda m, g, other, self: g}, "formula for self takes (m, g, other, self)"),
        ({"weight": lambda m, g, self, other: g}, "formulas for ['weight'], which are not inputs"),
        ({"saves": ("self", "bias")}, "saves ['bias'], which are neither inputs nor 'result'"),
        ({"joint": lambda m, g, self, other: (g, g)}, "either one formula per input or joint=, not both"),
        ({"forward": lambda xp, self, other, *, k=1: self}, "the forward: "),
        ({"keeps": ("other",)}, "keeps ('other',) must be the last attrs"),
    ],
    ids=[
        "forward-names",
        "varargs",
        "order",
        "unknown-input",
        "unknown-save",
        "joint-and-formulas",
        "kwonly",
        "keeps-not-an-attr",
    ],
)
def test_a_malformed_row_fails_when_built(kwargs, message):
    spec = {
        "forward": lambda xp, self, other: self * other,
        "saves": ("self", "other"),
        "self": lambda m, g, self, other: g * other,
        "other": lambda m, g, self, other: g * self,
    }
    spec.update(kwargs)
    forward = spec.pop("forward")
    with pytest.raises(RowError) as info:
        row("BadBackward0", forward, inputs=("self", "other"), **spec)
    assert message in str(info.value)
    assert "BadBackward0" in str(info.value)


def _data(seed, shape=(3, 4)):
    return np.random.RandomState(seed).uniform(-1.5, 1.5, shape)


# Two-input rows whose formulas read both saved inputs: each input alone requiring grad
# must save what its own formula reads (smooth_l1's target formula once read nothing).
TWO_INPUT = {
    "smooth_l1_loss": lambda a, b: F.smooth_l1_loss(a, b, beta=0.5),
    "smooth_l1_loss_none": lambda a, b: F.smooth_l1_loss(a * 3, b, reduction="none"),
    "mse_loss": lambda a, b: F.mse_loss(a, b),
    "binary_cross_entropy_with_logits": lambda a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()),
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 1),
    "pow": lambda a, b: (a.abs() + 0.5) ** b,
    "maximum": lambda a, b: engine.maximum(a, b),
}


@pytest.mark.parametrize("which", [0, 1], ids=["first-only", "second-only"])
@pytest.mark.parametrize("name", sorted(TWO_INPUT))
def test_one_input_alone_requires_grad(name, which):
    fn = TWO_INPUT[name]
    arrays = [_data(1), _data(2) + 0.05]  # distinct values: maximum is smooth here
    tensors = [engine.tensor(a, requires_grad=(i == which)) for i, a in enumerate(arrays)]
    diff = tensors[which]

    def f(x):
        args = list(tensors)
        args[which] = x
        return fn(*args)

    check_grad(f, diff)
    check_gradgrad(f, diff)


def test_smooth_l1_target_gradient_is_the_negated_input_gradient():
    x = engine.tensor(_data(3), requires_grad=True)
    t = engine.tensor(_data(4), requires_grad=True)
    F.smooth_l1_loss(x, t, beta=0.7).backward()
    np.testing.assert_allclose(t.grad.numpy(), -x.grad.numpy())
    t_only = engine.tensor(_data(4), requires_grad=True)
    F.smooth_l1_loss(x.detach(), t_only, beta=0.7).backward()
    np.testing.assert_allclose(t_only.grad.numpy(), t.grad.numpy())


def test_smooth_l1_target_gradient_matches_torch(torch):
    a, b = _data(5), _data(6)
    t = engine.tensor(b, requires_grad=True)
    F.smooth_l1_loss(engine.tensor(a), t, beta=0.5).backward()
    tt = torch.tensor(b, requires_grad=True)
    torch.nn.functional.smooth_l1_loss(torch.tensor(a), tt, beta=0.5).backward()
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-12)
    assert F.smooth_l1_loss(engine.tensor(a), t).grad_fn.name() == "SmoothL1LossBackward0"
