"""Batching rules for the derivative table's forwards: a row run on a leading batch of inputs.

Two users share them. `engine.func.vmap` runs every op of a function on a batch (func/batched.py):
a batched tensor's arrays carry the batch in front, the others are as the function sees them.
gradcheck's batched numerical Jacobian (autograd/gradcheck/batched.py) replays a recorded
forward with every perturbation at once the same way. A rule gets the row, its arrays
(`batched[i]` says which carry the batch), its attrs and the unbatched output's shape, and
returns the output with the batch dimension in front.

A row without a rule, or a rule that does not fit its operands, runs its forward once per batch
element and stacks the results (torch's vmap fallback: slower, same values), unless an attr is an
array (worked out from one example's values, perhaps) or the elements' results differ in shape: it
raises `Unbatchable` then, and vmap runs the whole function once per example, gradcheck one forward
per perturbation. Rules keep
numpy's order of operations per batch element (matmul as one product of stacked rows,
reductions over each element's own contiguous values), so the values match the plain
forwards to the last bit where numpy's kernels allow.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy

from .. import backend
from . import derivatives as D
from .batch_dims import BatchedAttr, Unbatchable, aligned, batch_size, shift_dim, shifted, takes_batched_attrs
from .linalg.batching import RULES as LINALG_RULES
from .nn.batching import RULES as NN_RULES
from .op import Op, tied_to_self
from .shaping.batching import RULES as SHAPING_RULES

__all__ = [
    "RULES",
    "BatchedAttr",
    "Unbatchable",
    "row_named",
    "row_of",
    "rule_of",
    "run_batched",
    "run_batched_outputs",
]


@takes_batched_attrs
def _elementwise(op, datas, batched, attrs, shape):
    datas = [aligned(d, len(shape)) if b else d for d, b in zip(datas, batched)]
    attrs = [aligned(a.array, len(shape)) if a.__class__ is BatchedAttr else a for a in attrs]
    return op.forward(numpy, *datas, *attrs)


@takes_batched_attrs
def _drawn(op, datas, batched, attrs, shape):
    """bernoulli_: the draws (each example's, or one draw shared by the batch) in self's dtype."""
    draws = attrs[-1]
    draws = aligned(draws.array, len(shape)) if draws.__class__ is BatchedAttr else draws
    size = batch_size(datas, batched)
    return numpy.broadcast_to(draws, (size, *shape)).astype(datas[0].dtype)


def _reshape(op, datas, batched, attrs, shape):
    return datas[0].reshape((datas[0].shape[0],) + shape)


def _expand(op, datas, batched, attrs, shape):
    x = datas[0]
    return numpy.broadcast_to(aligned(x, len(shape)), (x.shape[0],) + shape)


def _t(op, datas, batched, attrs, shape):
    x = datas[0]
    return x.swapaxes(1, 2) if x.ndim == 3 else x


def _transpose(op, datas, batched, attrs, shape):
    x = datas[0]
    return x.swapaxes(*shifted(attrs, x.ndim - 1))


def _permute(op, datas, batched, attrs, shape):
    x = datas[0]
    return x.transpose((0, *shifted(attrs[0], x.ndim - 1)))


def _sum_all(op, datas, batched, attrs, shape):
    x = datas[0]
    return x.sum(axis=tuple(range(1, x.ndim)), dtype=attrs[-1])


def _mean_all(op, datas, batched, attrs, shape):
    x = datas[0]
    return x.mean(axis=tuple(range(1, x.ndim)), dtype=attrs[-1])


def _each_example(method: str) -> Callable:
    """max, min, prod of all of an example's elements (the dtype attr, where the row has one, kept)."""

    def rule(op, datas, batched, attrs, shape):
        x = datas[0]
        axes = tuple(range(1, x.ndim))
        return getattr(x, method)(axis=axes, dtype=attrs[0]) if attrs else getattr(x, method)(axis=axes)

    return rule


def _reduce_dims(method: str) -> Callable:
    def rule(op, datas, batched, attrs, shape):
        x = datas[0]
        _, dim, keepdim, dtype = attrs
        return getattr(x, method)(shifted(dim, x.ndim - 1), dtype, keepdims=keepdim)

    return rule


def _along_dim(op, datas, batched, attrs, shape):
    """softmax, log_softmax: the one dim attr shifted past the batch."""
    x = datas[0]
    return op.forward(numpy, x, attrs[0] % (x.ndim - 1) + 1 if x.ndim > 1 else 1)


def _basic_index(op, datas, batched, attrs, shape):
    """select, slice: a key of ints, slices and Ellipsis, applied after the batch dim."""
    key = attrs[-1]
    key = key if isinstance(key, tuple) else (key,)
    if not all(k is Ellipsis or isinstance(k, (int, slice)) for k in key):
        raise Unbatchable(op.node.__name__)
    return datas[0][(slice(None), *key)]


def _dims_at(position: int) -> Callable:
    """A rule for a row whose attr `position` names dims: the inputs aligned, the dims shifted past the batch."""

    def rule(op, datas, batched, attrs, shape):
        rank = max((d.ndim - 1 if b else d.ndim) for d, b in zip(datas, batched) if hasattr(d, "ndim"))
        datas = [aligned(d, rank) if b else d for d, b in zip(datas, batched)]
        attrs = list(attrs)
        attrs[position] = shift_dim(attrs[position], rank)
        return op.forward(numpy, *datas, *attrs)

    return rule


def _roll(op, datas, batched, attrs, shape):
    if not attrs[1]:  # a roll of the flattened tensor
        raise Unbatchable(op.node.__name__)
    return _dims_at(1)(op, datas, batched, attrs, shape)


def _joined(op, datas, batched, attrs, shape):
    """cat, stack: every tensor given the batch (shared ones broadcast), the dim shifted past it."""
    size = batch_size(datas, batched)
    datas = [d if b else numpy.broadcast_to(d, (size, *d.shape)) for d, b in zip(datas, batched)]
    rank = datas[0].ndim - 1 + (op.node.__name__ == "StackBackward0")
    return op.forward(numpy, *datas, attrs[0] % rank + 1, *attrs[1:])


def _dot(op, datas, batched, attrs, shape):
    return numpy.einsum("...i,...i->...", *datas)


def _mv(op, datas, batched, attrs, shape):
    matrix, vector = datas
    return numpy.matmul(matrix, vector[..., None])[..., 0]


def _folded(op, datas, batched, attrs, shape):
    """A batch of (N, C, H, W) inputs to a convolution, im2col, a pool: the batch folded into N."""
    if batched[1:] != [False] * (len(batched) - 1) or datas[0].ndim != 5:
        raise Unbatchable(op.node.__name__)
    x = datas[0]
    out = op.forward(numpy, x.reshape(-1, *x.shape[2:]), *datas[1:], *attrs)
    return out.reshape(x.shape[0], *shape)


def _col2im(op, datas, batched, attrs, shape):
    """col2im of a batch of (N, C*k*k, L) columns: the batch folded into N, and into the output's shape attr."""
    cols = datas[0]
    size = cols.shape[0]
    out = op.forward(numpy, cols.reshape(-1, *cols.shape[2:]), (size * shape[0], *shape[1:]), *attrs[1:])
    return out.reshape(size, *shape)


def _tied(op, datas, batched, attrs, shape):
    """A gradient tied to its op's input (tied_to_self): the gradient itself, batched as it comes."""
    grad_input = datas[0]
    size = batch_size(datas, batched)
    return grad_input.copy() if batched[0] else numpy.broadcast_to(grad_input, (size, *shape)).copy()


_TIED = tied_to_self("Backward0").forward.__code__


def _product(a, b, batched_a: bool, batched_b: bool):
    """a @ b for 2-d a, b: a batch of a's as one product of their stacked rows, a batch of b's stacked."""
    if batched_a and not batched_b:
        n, k = a.shape[1:]
        return (a.reshape(-1, k) @ b).reshape(a.shape[0], n, b.shape[-1])
    if (
        a.shape[-1] == 1
    ):  # outer products (a per-sample weight gradient): numpy's batched matmul is slow there
        return a * b
    return numpy.matmul(a, b)


def _mm(op, datas, batched, attrs, shape):
    return _product(*datas, *batched)


def _bmm(op, datas, batched, attrs, shape):
    return numpy.matmul(*datas)


def _addmm(op, datas, batched, attrs, shape):
    bias, mat1, mat2 = datas
    if attrs and tuple(attrs) != (1, 1):
        raise Unbatchable(op.node.__name__)
    out = _product(mat1, mat2, batched[1], batched[2])
    if batched[0] and not (batched[1] or batched[2]):
        out = numpy.broadcast_to(out, (bias.shape[0], *out.shape)).copy()
    out += aligned(bias, len(shape)) if batched[0] else bias
    return out


_ELEMENTWISE_ROWS = (
    "AddBackward0 AddBackward1 SubBackward0 SubBackward1 RsubBackward1 MulBackward0 MulBackward1 "
    "DivBackward0 DivBackward1 NegBackward0 ReciprocalBackward0 PowBackward0 PowBackward1 PowBackward2 "
    "ExpBackward0 LogBackward0 SqrtBackward0 SinBackward0 CosBackward0 TanhBackward0 SigmoidBackward0 "
    "SinhBackward0 CoshBackward0 Expm1Backward0 ReluBackward0 LeakyReluBackward0 AbsBackward0 "
    "ClampBackward1 ClampMinBackward0 MaximumBackward0 WhereBackward0 CloneBackward0 "
    "AcosBackward0 AcoshBackward0 AcoshBackward1 AsinBackward0 AsinhBackward0 AsinhBackward1 AtanBackward0 "
    "AtanhBackward0 AtanhBackward1 CeilBackward0 FloorBackward0 RoundBackward0 RoundBackward1 TruncBackward0 "
    "FracBackward0 SignBackward0 SgnBackward0 ErfBackward0 ErfcBackward0 ErfinvBackward0 Exp2Backward0 "
    "Log10Backward0 Log1PBackward0 Log2Backward0 RsqrtBackward0 TanBackward0 CopysignBackward1 FmodBackward0 "
    "RemainderBackward0 XlogyBackward1 XlogyBackward2 NanToNumBackward0 AliasBackward0 ToCopyBackward0 "
    "CeluBackward0 CeluBackward1 EluBackward0 EluBackward1 GeluBackward0 SiluBackward0 MishBackward0 "
    "SoftplusBackward0 LogSigmoidBackward0 HardtanhBackward0 HardtanhBackwardBackward0 HardsigmoidBackward0 "
    "HardsigmoidBackwardBackward0 HardswishBackward0 LeakyReluBackwardBackward0 ThresholdBackwardBackward0 "
    "TrilBackward0 TriuBackward0 ClampBackward0 ClampMinBackward1 Atan2Backward0 CopysignBackward0 "
    "FmodBackward1 RemainderBackward1 HypotBackward0 LogaddexpBackward0 Logaddexp2Backward0 XlogyBackward0 "
    "LerpBackward0 LerpBackward1 DivBackward2 MinimumBackward0 MaskedFillBackward0 MaskedFillBackward1 "
    "FillBackward0 ZeroBackward0"
).split()
_DIMS_FIRST = (
    "CumsumBackward0 CumprodBackward0 FlipBackward0 AmaxBackward0 AminBackward0 LogsumexpBackward0 "
    "VarBackward0 StdBackward0 ProdBackward1 SafeSoftmaxBackward0 SoftmaxBackwardDataBackward0"
).split()
_DIMS_FIRST += (
    "LogcumsumexpBackward0 NansumBackward0 StdMeanBackward0 VarMeanBackward0 AminmaxBackward0 "
    "LinalgCrossBackward0 GluBackward0"
).split()
_DIMS_SECOND = "LinalgVectorNormBackward0 NormBackward1 Rot90Backward0".split()
_RESHAPES = "ViewBackward0 ReshapeAliasBackward0 UnsafeViewBackward0".split() + list(D.SQUEEZE)

#: node name -> rule(op, datas, batched, attrs, recorded output shape) -> batched output
RULES: dict[str, Callable] = {
    **SHAPING_RULES,
    **NN_RULES,
    **LINALG_RULES,
    **dict.fromkeys(_ELEMENTWISE_ROWS, _elementwise),
    **dict.fromkeys(_RESHAPES, _reshape),
    "ExpandBackward0": _expand,
    "TBackward0": _t,
    "TransposeBackward0": _transpose,
    "TransposeBackward1": _transpose,
    "PermuteBackward0": _permute,
    "SumBackward0": _sum_all,
    "MeanBackward0": _mean_all,
    "SumBackward1": _reduce_dims("sum"),
    "MeanBackward1": _reduce_dims("mean"),
    **dict.fromkeys(_DIMS_FIRST, _dims_at(0)),
    **dict.fromkeys(_DIMS_SECOND, _dims_at(1)),
    "RollBackward0": _roll,
    "CatBackward0": _joined,
    "StackBackward0": _joined,
    "DotBackward0": _dot,
    "MvBackward0": _mv,
    "ConvolutionBackward0": _folded,
    "Im2ColBackward0": _folded,
    "Col2ImBackward0": _col2im,
    "AvgPool2DBackward0": _folded,
    "SoftmaxBackward0": _along_dim,
    "LogSoftmaxBackward0": _along_dim,
    "SelectBackward0": _basic_index,
    "SliceBackward0": _basic_index,
    "BernoulliBackward1": _drawn,
    "BernoulliBackward2": _drawn,
    "MaxBackward1": _each_example("max"),
    "MinBackward1": _each_example("min"),
    "ProdBackward0": _each_example("prod"),
    "MmBackward0": _mm,
    "BmmBackward0": _bmm,
    "AddmmBackward0": _addmm,
}

_ROWS: dict[type, Op] = {}


def _rows() -> dict[type, Op]:
    if not _ROWS:
        for value in vars(D).values():
            for op in (
                value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else (value,)
            ):
                if isinstance(op, Op):
                    _ROWS[op.node] = op
    return _ROWS


def row_table() -> list[Op]:
    """Every row of the derivative table."""
    return list(_rows().values())


def row_of(node_class: type) -> Op | None:
    """The table row whose nodes are of `node_class` (None for custom Functions and other nodes)."""
    return _rows().get(node_class)


def row_named(node_name: str) -> Op | None:
    """The table row of the node named `node_name` (None for a node no row makes)."""
    return next((op for node, op in _rows().items() if node.__name__ == node_name), None)


def rule_of(op: Op) -> Callable | None:
    """The row's batching rule (None where it has none)."""
    rule = RULES.get(op.node.__name__)
    if rule is None and getattr(op.forward, "__code__", None) is _TIED:
        return _tied
    return rule


def _ruled(op: Op, datas: list, batched: list, attrs: tuple, shape):
    rule = rule_of(op)
    if rule is not None and (
        getattr(rule, "takes_batched_attrs", False) or not any(a.__class__ is BatchedAttr for a in attrs)
    ):
        try:
            return rule(op, datas, batched, attrs, shape)
        except (ValueError, IndexError):  # the rule does not fit these operands
            pass
    return _per_element(op, datas, batched, attrs)


#: Rows whose forward reads memory (sizes, strides and offsets into a storage), not values: one batch
#: element's array sits elsewhere in its storage than the tensor the function sees, so these are
#: never run per element.
_STORAGE_ROWS = frozenset({"AsStridedBackward0", "AsStridedBackward1"})


def _per_element(op: Op, datas: list, batched: list, attrs: tuple):
    """The row's forward on each batch element, stacked (per output for a row of several).

    Not for a row with an array among its attrs: indices or masks a function worked out from the values
    it was shown (one example's) would be wrong for the others; vmap then runs the whole function per
    example, which works them out again for each.
    """
    if op.node.__name__ in _STORAGE_ROWS or any(backend.is_array(a) for a in attrs):
        raise Unbatchable(op.node.__name__)
    xp = backend.xp_of(next(d for d, b in zip(datas, batched) if b))
    outs = []
    for k in range(batch_size(datas, batched)):
        element = [d[k] if b else d for d, b in zip(datas, batched)]
        element_attrs = [a.array[k] if a.__class__ is BatchedAttr else a for a in attrs]
        outs.append(op.forward(xp, *element, *element_attrs))
    try:
        if isinstance(outs[0], (tuple, list)):
            return [xp.stack([xp.asarray(o[j]) for o in outs]) for j in range(len(outs[0]))]
        return xp.stack([xp.asarray(o) for o in outs])
    except ValueError as error:  # elements of different shapes: no batch to give
        raise Unbatchable(op.node.__name__) from error


def _checked(op: Op, out, size: int, shape: tuple, dtype) -> numpy.ndarray:
    out = numpy.asarray(out)
    if out.shape != (size, *shape) or (dtype is not None and out.dtype != dtype):
        raise Unbatchable(op.node.__name__)
    return out


def run_batched(op: Op, datas: list, batched: list, attrs: tuple, shape: tuple, dtype) -> numpy.ndarray:
    """`op` on arrays of which those with `batched[i]` carry a leading batch dimension.

    Raises Unbatchable for a row without a rule, or a result not shaped and typed as the
    recorded output would be with the batch in front (a rule that does not fit this use);
    `dtype=None` leaves the result's dtype to the caller (a promoting row, cast back to torch's).
    """
    out = numpy.asarray(_ruled(op, datas, batched, attrs, shape))
    size = next(d.shape[0] for d, b in zip(datas, batched) if b)
    if out.shape != (size, *shape) or (dtype is not None and out.dtype != dtype):
        raise Unbatchable(op.node.__name__)
    return out


def run_batched_outputs(op: Op, datas: list, batched: list, attrs: tuple, shapes: list, dtypes: list) -> list:
    """run_batched for a row of several outputs (svd's U, S, Vh): each output with the batch in front."""
    outs = _ruled(op, datas, batched, attrs, shapes[0])
    if not isinstance(outs, (tuple, list)) or len(outs) != len(shapes):
        raise Unbatchable(op.node.__name__)
    size = batch_size(datas, batched)
    return [_checked(op, out, size, shape, dtype) for out, shape, dtype in zip(outs, shapes, dtypes)]
