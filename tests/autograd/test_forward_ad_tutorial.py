"""The examples of PyTorch's forward-mode AD tutorial (intermediate/forward_ad_usage), run on the engine
and on torch with the same inputs: the same tangents."""

import numpy as np
import pytest

import engine

pytestmark = pytest.mark.torch_parity

RNG = np.random.default_rng(0)
PRIMAL, TANGENT, PLAIN = (RNG.standard_normal((10, 10)) for _ in range(3))
WEIGHT, BIAS, INPUT = RNG.standard_normal((5, 5)), RNG.standard_normal(5), RNG.standard_normal((16, 5))
WEIGHT_T, BIAS_T = RNG.random((5, 5)), RNG.random(5)


def basics(lib):
    fwAD = lib.autograd.forward_ad
    primal, tangent = lib.tensor(PRIMAL), lib.tensor(TANGENT)

    def fn(x, y):
        return x**2 + y**2

    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual_input).tangent is tangent
        plain_tensor = lib.tensor(PLAIN)
        dual_output = fn(dual_input, plain_tensor)
        jvp = fwAD.unpack_dual(dual_output).tangent
    assert fwAD.unpack_dual(dual_output).tangent is None
    return jvp


def modules(lib):
    fwAD = lib.autograd.forward_ad
    model = lib.nn.Linear(5, 5)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(WEIGHT))
        model.bias.copy_(lib.tensor(BIAS))
    params = {name: p for name, p in model.named_parameters()}
    tangents = {
        "weight": lib.tensor(WEIGHT_T, dtype=lib.float32),
        "bias": lib.tensor(BIAS_T, dtype=lib.float32),
    }
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out = model(lib.tensor(INPUT, dtype=lib.float32))
        return fwAD.unpack_dual(out).tangent


def custom_function(lib):
    fwAD = lib.autograd.forward_ad

    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = lib.exp(foo)
            ctx.result = result  # the tutorial keeps it on ctx for jvp
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    primal = lib.tensor(PRIMAL, requires_grad=True)
    with fwAD.dual_level():
        dual_output = Fn.apply(fwAD.make_dual(primal, lib.tensor(TANGENT)))
        return fwAD.unpack_dual(dual_output).tangent


@pytest.mark.parametrize("example", [basics, modules, custom_function])
def test_tutorial_example(example, torch):
    ours, theirs = example(engine), example(torch)
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-6
    )  # modules: float32
