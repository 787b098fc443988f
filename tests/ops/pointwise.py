"""Registry entries of elementwise ops: arithmetic and its broadcasting, unary math, binary math, clamp,
maximum / minimum, and chains of in-place ops."""

import numpy as np

from ops.opinfo import NUMPY, OpInfo, Sample
from ops.support import (
    D34,
    DIVIDEND,
    DIVISOR,
    P34,
    R34,
    inplace_augmented,
    inplace_chain,
    inplace_chain_np,
    inplace_clamp_tensor,
    inplace_misc,
    inplace_misc_np,
    inplace_through_view,
    inplace_through_view_np,
    inplace_transposed_view,
    inplace_transposed_view_np,
    setitem_row,
)

UNARY = [  # (name, domain, node); tests/test_ops_pointwise.py checks these names across dtypes too
    ("floor", "d", "FloorBackward0"),
    ("ceil", "d", "CeilBackward0"),
    ("trunc", "d", "TruncBackward0"),
    ("fix", "d", "TruncBackward0"),
    ("round", "d", "RoundBackward0"),
    ("frac", "d", "FracBackward0"),
    ("sign", "d", "SignBackward0"),
    ("sgn", "d", "SgnBackward0"),
    ("rsqrt", "p", "RsqrtBackward0"),
    ("tan", "u", "TanBackward0"),
    ("asin", "u", "AsinBackward0"),
    ("arcsin", "u", "AsinBackward0"),
    ("acos", "u", "AcosBackward0"),
    ("arccos", "u", "AcosBackward0"),
    ("atan", "r", "AtanBackward0"),
    ("arctan", "r", "AtanBackward0"),
    ("sinh", "r", "SinhBackward0"),
    ("cosh", "r", "CoshBackward0"),
    ("asinh", "r", "AsinhBackward0"),
    ("arcsinh", "r", "AsinhBackward0"),
    ("acosh", "g", "AcoshBackward0"),
    ("arccosh", "g", "AcoshBackward0"),
    ("atanh", "u", "AtanhBackward0"),
    ("arctanh", "u", "AtanhBackward0"),
    ("expm1", "r", "Expm1Backward0"),
    ("exp2", "r", "Exp2Backward0"),
    ("log2", "p", "Log2Backward0"),
    ("log10", "p", "Log10Backward0"),
    ("erf", "r", "ErfBackward0"),
    ("erfc", "r", "ErfcBackward0"),
    ("erfinv", "u", "ErfinvBackward0"),
    ("absolute", "d", "AbsBackward0"),
    ("square", "r", "PowBackward0"),
    ("nan_to_num", "r", "NanToNumBackward0"),
]


def unary(name: str, domain: str, node: str) -> OpInfo:
    """A unary op as a function (first and second derivatives) and as a method (first), on a 3x4 and a 0-dim
    tensor."""
    samples = []
    for shape, label in (((3, 4), "3x4"), ((), "0-dim")):
        kinds = [(domain, shape)]
        samples.append(Sample(f"function-{label}", lambda lib, x: getattr(lib, name)(x), kinds, node=node))
        samples.append(
            Sample(f"method-{label}", lambda lib, x: getattr(x, name)(), kinds, node=node, gradgrad=False)
        )
    return OpInfo(name, samples)


OPS = [
    OpInfo(
        "add",
        [
            Sample("", lambda lib, x, y: x + y, [R34, R34], squared=True, ref=NUMPY),
            Sample("scalar", lambda lib, x: x + 2, [R34], squared=True, ref=NUMPY),
            Sample("radd_scalar", lambda lib, x: 2 + x, [R34], squared=True, ref=NUMPY),
            Sample(
                "bcast_31_14",
                lambda lib, x, y: x + y,
                [("r", (3, 1)), ("r", (1, 4))],
                squared=True,
                ref=NUMPY,
            ),
            Sample("bcast_4_34", lambda lib, x, y: x + y, [("r", (4,)), R34], squared=True, ref=NUMPY),
            Sample("bcast_0d_34", lambda lib, s, x: s + x, [("r", ()), R34], squared=True, ref=NUMPY),
        ],
    ),
    OpInfo(
        "sub",
        [
            Sample("", lambda lib, x, y: x - y, [R34, R34], squared=True, ref=NUMPY),
            Sample("scalar", lambda lib, x: x - 1.5, [R34], squared=True, ref=NUMPY),
            Sample("rsub_scalar", lambda lib, x: 2 - x, [R34], squared=True, ref=NUMPY),
            Sample(
                "bcast_31_14",
                lambda lib, x, y: x - y,
                [("r", (3, 1)), ("r", (1, 4))],
                squared=True,
                ref=NUMPY,
            ),
            Sample("bcast_34_4", lambda lib, x, y: x - y, [R34, ("r", (4,))], squared=True, ref=NUMPY),
            Sample("bcast_34_0d", lambda lib, x, s: x - s, [R34, ("r", ())], squared=True, ref=NUMPY),
        ],
    ),
    OpInfo(
        "mul",
        [
            Sample("", lambda lib, x, y: x * y, [R34, R34], squared=True, ref=NUMPY),
            Sample("scalar", lambda lib, x: x * 2.5, [R34], squared=True, ref=NUMPY),
            Sample("rmul_scalar", lambda lib, x: 2.5 * x, [R34], squared=True, ref=NUMPY),
            Sample(
                "bcast_31_14",
                lambda lib, x, y: x * y,
                [("r", (3, 1)), ("r", (1, 4))],
                squared=True,
                ref=NUMPY,
            ),
            Sample("bcast_4_34", lambda lib, x, y: x * y, [("r", (4,)), R34], squared=True, ref=NUMPY),
            Sample("bcast_0d_34", lambda lib, s, x: s * x, [("r", ()), R34], squared=True, ref=NUMPY),
            Sample(
                "bcast_3d",
                lambda lib, x, y: x * y + x,
                [("r", (2, 1, 4)), ("r", (3, 1))],
                squared=True,
                ref=NUMPY,
            ),
        ],
    ),
    OpInfo(
        "div",
        [
            Sample("", lambda lib, x, y: x / y, [R34, P34], squared=True, ref=NUMPY),
            Sample("scalar", lambda lib, x: x / 3, [R34], squared=True, ref=NUMPY),
            Sample("rdiv_scalar", lambda lib, x: 2 / x, [P34], squared=True, ref=NUMPY),
            Sample(
                "bcast_31_14",
                lambda lib, x, y: x / y,
                [("r", (3, 1)), ("p", (1, 4))],
                squared=True,
                ref=NUMPY,
            ),
            Sample("bcast_34_4", lambda lib, x, y: x / y, [R34, ("p", (4,))], squared=True, ref=NUMPY),
            Sample("bcast_34_0d", lambda lib, x, s: x / s, [R34, ("p", ())], squared=True, ref=NUMPY),
            Sample(
                "floor",
                lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
                [DIVIDEND, DIVISOR],
                node="DivBackward2",
                float32_first=True,
            ),
            Sample(
                "trunc",
                lambda lib, a, b: a.div(b, rounding_mode="trunc"),
                [DIVIDEND, DIVISOR],
                node="DivBackward2",
                float32_first=True,
            ),
            Sample(
                "none",
                lambda lib, a, b: lib.div(a, b, rounding_mode=None),
                [R34, P34],
                node="DivBackward2",
                float32_first=True,
            ),
            Sample(
                "floor_number",
                lambda lib, a: lib.div(a, 1.02, rounding_mode="floor"),
                [DIVIDEND],
                node="DivBackward2",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "pow",
        [
            Sample("tt", lambda lib, x, y: x**y, [P34, R34], squared=True, ref=NUMPY),
            Sample("scalar_int", lambda lib, x: x**3, [R34], squared=True, ref=NUMPY),
            Sample("scalar_2", lambda lib, x: x**2, [R34], squared=True, ref=NUMPY),
            Sample("scalar_half", lambda lib, x: x**0.5, [P34], squared=True, ref=NUMPY),
            Sample("scalar_neg", lambda lib, x: x**-1.5, [P34], squared=True, ref=NUMPY),
            Sample("rpow_scalar", lambda lib, x: 2**x, [R34], squared=True, ref=NUMPY),
            Sample("rpow_float", lambda lib, x: 1.5**x, [R34], squared=True, ref=NUMPY),
            Sample(
                "bcast_31_14", lambda lib, x, y: x**y, [("p", (3, 1)), ("r", (1, 4))], squared=True, ref=NUMPY
            ),
            Sample("bcast_34_0d", lambda lib, x, s: x**s, [P34, ("r", ())], squared=True, ref=NUMPY),
            Sample("method", lambda lib, x: x.pow(3), [R34], ref=lambda x: x**3, squared=True),
            Sample("method_t", lambda lib, x, y: x.pow(y), [P34, R34], ref=lambda x, y: x**y, squared=True),
            Sample("func", lambda lib, x: lib.pow(x, 2.5), [P34], ref=lambda x: x**2.5, squared=True),
            Sample(
                "func_scalar_base", lambda lib, x: lib.pow(2.0, x), [R34], ref=lambda x: 2.0**x, squared=True
            ),
            Sample("", lambda lib, a, b: a**b, [P34, R34], node="PowBackward1", float32_first=True),
            Sample("rpow", lambda lib, b: 2.5**b, [R34], node="PowBackward2", float32_first=True),
            Sample(
                "rpow_fraction",
                lambda lib, b: lib.pow(0.5, b),
                [R34],
                node="PowBackward2",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "neg",
        [
            Sample("", lambda lib, x: -x, [R34], squared=True, ref=NUMPY),
            Sample("method", lambda lib, x: x.neg(), [R34], ref=lambda x: -x, squared=True),
            Sample("func", lambda lib, x: lib.neg(x), [R34], ref=lambda x: -x, squared=True),
        ],
    ),
    OpInfo(
        "exp",
        [
            Sample("", lambda lib, x: x.exp(), [R34], ref=np.exp, squared=True),
            Sample("func", lambda lib, x: lib.exp(x), [R34], ref=np.exp, squared=True),
        ],
    ),
    OpInfo(
        "log",
        [
            Sample("", lambda lib, x: x.log(), [P34], ref=np.log, squared=True),
            Sample("func", lambda lib, x: lib.log(x), [P34], ref=np.log, squared=True),
        ],
    ),
    OpInfo(
        "log1p",
        [
            Sample("", lambda lib, x: x.log1p(), [P34], ref=np.log1p, squared=True),
            Sample("func", lambda lib, x: lib.log1p(x), [P34], ref=np.log1p, squared=True),
        ],
    ),
    OpInfo(
        "sqrt",
        [
            Sample("", lambda lib, x: x.sqrt(), [P34], ref=np.sqrt, squared=True),
            Sample("func", lambda lib, x: lib.sqrt(x), [P34], ref=np.sqrt, squared=True),
        ],
    ),
    OpInfo(
        "sin",
        [
            Sample("", lambda lib, x: x.sin(), [R34], ref=np.sin, squared=True),
            Sample("func", lambda lib, x: lib.sin(x), [R34], ref=np.sin, squared=True),
        ],
    ),
    OpInfo(
        "cos",
        [
            Sample("", lambda lib, x: x.cos(), [R34], ref=np.cos, squared=True),
            Sample("func", lambda lib, x: lib.cos(x), [R34], ref=np.cos, squared=True),
        ],
    ),
    OpInfo(
        "tanh",
        [
            Sample("", lambda lib, x: x.tanh(), [R34], ref=np.tanh, squared=True),
            Sample("func", lambda lib, x: lib.tanh(x), [R34], ref=np.tanh, squared=True),
        ],
    ),
    OpInfo(
        "sigmoid",
        [
            Sample("", lambda lib, x: x.sigmoid(), [R34], ref=lambda x: 1 / (1 + np.exp(-x)), squared=True),
            Sample(
                "func", lambda lib, x: lib.sigmoid(x), [R34], ref=lambda x: 1 / (1 + np.exp(-x)), squared=True
            ),
        ],
    ),
    OpInfo(
        "relu",
        [
            Sample("", lambda lib, x: x.relu(), [D34], ref=lambda x: np.maximum(x, 0), squared=True),
            Sample("func", lambda lib, x: lib.relu(x), [D34], ref=lambda x: np.maximum(x, 0), squared=True),
            Sample(
                "graph", lambda lib, x2: lib.nn.functional.relu(x2), [("r", (4, 3))], torch_tol=(1e-10, 1e-12)
            ),
        ],
    ),
    OpInfo(
        "abs",
        [
            Sample("", lambda lib, x: x.abs(), [D34], ref=np.abs, squared=True),
            Sample("func", lambda lib, x: lib.abs(x), [D34], ref=np.abs, squared=True),
            Sample("builtin", lambda lib, x: abs(x), [D34], ref=np.abs, squared=True),
        ],
    ),
    OpInfo(
        "clamp",
        [
            Sample(
                "",
                lambda lib, x: x.clamp(-0.6, 0.3),
                [D34],
                ref=lambda x: np.clip(x, -0.6, 0.3),
                squared=True,
            ),
            Sample(
                "min",
                lambda lib, x: x.clamp(min=-0.6),
                [D34],
                ref=lambda x: np.maximum(x, -0.6),
                squared=True,
            ),
            Sample(
                "max", lambda lib, x: x.clamp(max=0.3), [D34], ref=lambda x: np.minimum(x, 0.3), squared=True
            ),
            Sample(
                "func",
                lambda lib, x: lib.clamp(x, -0.6, 0.3),
                [D34],
                ref=lambda x: np.clip(x, -0.6, 0.3),
                squared=True,
            ),
            Sample(
                "tensor", lambda lib, x, lo, hi: x.clamp(lo, hi), [D34, D34, D34], ref=np.clip, squared=True
            ),
            Sample(
                "tensor_min", lambda lib, x, lo: x.clamp(min=lo), [D34, D34], ref=np.maximum, squared=True
            ),
            Sample(
                "tensor_max_bcast",
                lambda lib, x, hi: x.clamp(max=hi),
                [D34, ("d", (4,))],
                ref=np.minimum,
                squared=True,
            ),
            Sample(
                "tensor_bcast",
                lambda lib, x, lo, hi: lib.clip(x, lo, hi),
                [("d", (3, 1)), ("d", (4,)), D34],
                ref=np.clip,
                squared=True,
            ),
            Sample(
                "tensor_const_bounds",
                lambda lib, x: lib.clamp(x, lib.tensor(np.full((3, 4), -0.6)), lib.tensor(np.full(4, 0.3))),
                [D34],
                ref=lambda x: np.clip(x, -0.6, 0.3),
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "maximum",
        [
            Sample("", lambda lib, x, y: lib.maximum(x, y), [D34, D34], ref=np.maximum, squared=True),
            Sample("method", lambda lib, x, y: x.maximum(y), [D34, D34], ref=np.maximum, squared=True),
            Sample(
                "bcast",
                lambda lib, x, y: lib.maximum(x, y),
                [("d", (3, 1)), ("d", (1, 4))],
                ref=np.maximum,
                squared=True,
            ),
            Sample(
                "same",
                lambda lib, x: lib.maximum(x, x * x),
                [D34],
                ref=lambda x: np.maximum(x, x * x),
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "minimum",
        [
            Sample("", lambda lib, x, y: lib.minimum(x, y), [D34, D34], ref=np.minimum, squared=True),
            Sample("method", lambda lib, x, y: x.minimum(y), [D34, D34], ref=np.minimum, squared=True),
            Sample(
                "bcast_0d",
                lambda lib, s, x: lib.minimum(s, x),
                [("d", ()), D34],
                ref=np.minimum,
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "inplace",
        [
            Sample("chain", inplace_chain, [R34], ref=inplace_chain_np, squared=True),
            Sample("setitem_row", setitem_row, [R34], squared=True, ref=NUMPY),
            Sample("through_view", inplace_through_view, [R34], ref=inplace_through_view_np, squared=True),
            Sample("augmented", inplace_augmented, [P34], squared=True, ref=NUMPY),
            Sample("misc", inplace_misc, [R34], ref=inplace_misc_np, squared=True),
            Sample("clamp_tensor", inplace_clamp_tensor, [D34, D34, ("d", (4,))], ref=np.clip, squared=True),
            Sample(
                "transposed_view",
                inplace_transposed_view,
                [R34],
                ref=inplace_transposed_view_np,
                squared=True,
            ),
        ],
    ),
    *[unary(*row) for row in UNARY],
    OpInfo(
        "atan2",
        [
            Sample(
                "", lambda lib, a, b: lib.atan2(a, b), [R34, R34], node="Atan2Backward0", float32_first=True
            ),
            Sample(
                "bcast",
                lambda lib, a, b: a.atan2(b),
                [R34, ("r", (4,))],
                node="Atan2Backward0",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "arctan2",
        [
            Sample(
                "",
                lambda lib, a, b: lib.arctan2(a, b),
                [("r", ()), R34],
                node="Atan2Backward0",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "copysign",
        [
            Sample(
                "",
                lambda lib, a, b: lib.copysign(a, b),
                [D34, D34],
                node="CopysignBackward0",
                float32_first=True,
            ),
            Sample(
                "bcast",
                lambda lib, a, b: a.copysign(b),
                [D34, ("d", (3, 1))],
                node="CopysignBackward0",
                float32_first=True,
            ),
            Sample(
                "number",
                lambda lib, a: lib.copysign(a, -1.5),
                [D34],
                node="CopysignBackward1",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "fmod",
        [
            Sample(
                "",
                lambda lib, a, b: lib.fmod(a, b),
                [DIVIDEND, DIVISOR],
                node="FmodBackward1",
                float32_first=True,
            ),
            Sample(
                "number", lambda lib, a: a.fmod(-1.02), [DIVIDEND], node="FmodBackward0", float32_first=True
            ),
        ],
    ),
    OpInfo(
        "remainder",
        [
            Sample(
                "",
                lambda lib, a, b: lib.remainder(a, b),
                [DIVIDEND, DIVISOR],
                node="RemainderBackward1",
                float32_first=True,
            ),
            Sample(
                "neg",
                lambda lib, a, b: lib.remainder(a, -b),
                [DIVIDEND, DIVISOR],
                node="RemainderBackward1",
                float32_first=True,
            ),
            Sample(
                "mod_operator",
                lambda lib, a, b: a % b,
                [DIVIDEND, DIVISOR],
                node="RemainderBackward1",
                float32_first=True,
            ),
            Sample(
                "mod_number",
                lambda lib, a: a % 1.02,
                [DIVIDEND],
                node="RemainderBackward0",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "hypot",
        [
            Sample(
                "", lambda lib, a, b: lib.hypot(a, b), [D34, D34], node="HypotBackward0", float32_first=True
            ),
            Sample(
                "bcast",
                lambda lib, a, b: a.hypot(b),
                [D34, ("d", ())],
                node="HypotBackward0",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "logaddexp",
        [
            Sample(
                "",
                lambda lib, a, b: lib.logaddexp(a, b),
                [R34, R34],
                node="LogaddexpBackward0",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "logaddexp2",
        [
            Sample(
                "",
                lambda lib, a, b: a.logaddexp2(b),
                [R34, ("r", (4,))],
                node="Logaddexp2Backward0",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "xlogy",
        [
            Sample(
                "", lambda lib, a, b: lib.xlogy(a, b), [R34, P34], node="XlogyBackward0", float32_first=True
            ),
            Sample(
                "number_other", lambda lib, a: a.xlogy(2.5), [R34], node="XlogyBackward2", float32_first=True
            ),
            Sample(
                "number_self",
                lambda lib, b: lib.xlogy(2.5, b),
                [P34],
                node="XlogyBackward1",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "lerp",
        [
            Sample(
                "small",
                lambda lib, a, b: lib.lerp(a, b, 0.3),
                [R34, R34],
                node="LerpBackward0",
                float32_first=True,
            ),
            Sample(
                "large",
                lambda lib, a, b: a.lerp(b, 0.7),
                [R34, ("r", (4,))],
                node="LerpBackward0",
                float32_first=True,
            ),
            Sample(
                "tensor",
                lambda lib, a, b, w: lib.lerp(a, b, w),
                [R34, ("r", (4,)), ("r", (3, 1))],
                node="LerpBackward1",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "float_power",
        [
            Sample(
                "",
                lambda lib, a, b: lib.float_power(a, b),
                [P34, R34],
                node="PowBackward1",
                float32_first=True,
            ),
            Sample("number", lambda lib, a: a.float_power(3), [R34], node="PowBackward0", float32_first=True),
            Sample(
                "number_base",
                lambda lib, b: lib.float_power(2, b),
                [R34],
                node="PowBackward2",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "divide",
        [
            Sample(
                "trunc",
                lambda lib, a, b: lib.divide(a, b, rounding_mode="trunc"),
                [DIVIDEND, DIVISOR],
                node="DivBackward2",
                float32_first=True,
            ),
        ],
    ),
    OpInfo(
        "true_divide",
        [
            Sample(
                "",
                lambda lib, a, b: lib.true_divide(a, b),
                [R34, P34],
                node="DivBackward0",
                float32_first=True,
            ),
        ],
    ),
]
