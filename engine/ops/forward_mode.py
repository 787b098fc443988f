"""Forward-mode AD's propagation: an op's output tangents from its inputs' tangents.

`apply_op` calls `propagate` once some tensor carries a tangent (autograd/forward_grad.py). A row's
rule is its `jvp=` entry, else one derived from its backward formulas:

- `LINEAR` (views, reductions by sum, joins, indexing): the row's own forward on the tangents.
- `BILINEAR` (mm, bmm, dot, ...): the forward with one operand replaced by its tangent, summed.
- `ADD_PRODUCT` (addmm, addmv, baddbmm, ...: beta self + alpha a∘b): f(dself, da, b) + f(0, a, db).
- a function `(m, tangents, inputs, attrs, result)`: the row's own rule, on Tensors through `m`.
- `BIASED_PRODUCT` (convolution: a∘b + bias): f(da, b, dbias) + f(a, db, None).
- `SYMMETRIC` (unary math, softmax), and every elementwise row (`ELEMENTWISE`): the Jacobian is
  symmetric (diagonal, for elementwise rows), so J v is each input's backward formula applied to its
  tangent, summed.
- otherwise, through the row's backward (the fallback): J v = d/du <Jᵀu, v>, exact because Jᵀu is
  linear in u, at the cost of two recorded backward passes of the row.

Every rule runs on Tensors and is recorded when grad mode is on, so tangents are differentiable by
reverse mode; the tangents' own ops propagate nothing (`forward_grad.suspended`).
"""

from __future__ import annotations

from ..autograd import forward_grad, grad_mode
from ..autograd.backward import grad
from ..tensor import Tensor
from .creation import ones_like, zeros_like
from .op import ADD_PRODUCT, BIASED_PRODUCT, BILINEAR, LINEAR, SYMMETRIC, _broadcast_meta, apply_op, new_node
from .tangents import tangent_of
from .tensor_math import TensorMath

_m = TensorMath()
_WANTED = (object(), 0)  # a stand-in edge: the fallback's node computes this input's formula


def _differentiable(t) -> bool:
    return t._data.dtype.kind == "f"


def propagate(op, inputs, attrs, outputs) -> None:
    """Give `outputs` their tangents, when some input has one and an output can (is floating)."""
    tangents = []
    found = False
    for x in inputs:
        t = tangent_of(x) if isinstance(x, Tensor) else None
        tangents.append(t)
        found = found or t is not None
    if not found or not any(_differentiable(out) for out in outputs):
        return
    with forward_grad.suspended():
        results = _rule_of(op)(op, tangents, inputs, attrs, outputs)
    for out, t in zip(outputs, results):
        if t is not None and _differentiable(out):
            forward_grad.set_tangent(out, _as_output(t, out))


def _as_output(t: Tensor, out: Tensor) -> Tensor:
    if t._data.dtype != out._data.dtype:
        t = t.to(out.dtype)
    if t._data.shape != out._data.shape:
        t = t.expand(out.shape).clone()
    return t


def _rule_of(op):
    jvp = op.jvp
    if jvp is LINEAR:
        return _linear
    if jvp is BILINEAR:
        return _bilinear
    if jvp is ADD_PRODUCT:
        return _add_product
    if jvp is BIASED_PRODUCT:
        return _biased_product
    if jvp is SYMMETRIC or (jvp is None and op.broadcasts and op.promotes):  # ELEMENTWISE
        return _symmetric
    if jvp is None:
        return _through_backward
    return lambda op, tangents, inputs, attrs, outputs: (jvp(_m, tangents, inputs, attrs, outputs[0]),)


def _zeros_for(x):
    """A tensor input without a tangent, in a linear row's forward on the tangents: zeros (indices stay)."""
    return zeros_like(x) if isinstance(x, Tensor) and _differentiable(x) else x


def _fresh(op, attrs) -> tuple:
    """The attrs with empty `keeps=` boxes: a tangent's forward must not fill the primal's."""
    kept = len(op.node.kept_names)
    return (*attrs[:-kept], *(None,) * kept) if kept else attrs


def _linear(op, tangents, inputs, attrs, outputs):
    args = [_zeros_for(x) if t is None else t for x, t in zip(inputs, tangents)]
    return (apply_op(op, tuple(args), _fresh(op, attrs)),)


def _bilinear(op, tangents, inputs, attrs, outputs):
    attrs = _fresh(op, attrs)
    total = None
    for k, t in enumerate(tangents):
        if t is None:
            continue
        term = apply_op(op, (*inputs[:k], t, *inputs[k + 1 :]), attrs)
        total = term if total is None else total + term
    return (total,)


def _add_product(op, tangents, inputs, attrs, outputs):
    (dself, da, db), (self, a, b) = tangents, inputs
    total = None
    if dself is not None or da is not None:
        total = apply_op(op, (_or_zeros(dself, self), _or_zeros(da, a), b), attrs)
    if db is not None:
        term = apply_op(op, (zeros_like(self), a, db), attrs)
        total = term if total is None else total + term
    return (total,)


def _biased_product(op, tangents, inputs, attrs, outputs):
    (da, db, dbias), (a, b, _) = tangents, inputs
    attrs = _fresh(op, attrs)
    total = None
    if da is not None or dbias is not None:
        total = apply_op(op, (_or_zeros(da, a), b, dbias), attrs)
    if db is not None:
        term = apply_op(op, (a, db, None), attrs)
        total = term if total is None else total + term
    return (total,)


def _or_zeros(t, x):
    return zeros_like(x) if t is None else t


def _saved_args(op, inputs, outputs) -> list:
    return [outputs[-1 - i] if i < 0 else inputs[i] for i in op.node.saved_sources]


def _symmetric(op, tangents, inputs, attrs, outputs):
    shape = outputs[0].shape
    if any(t is not None and t.ndim > len(shape) for t in tangents):  # an input larger than the result (dist)
        return _through_backward(op, tangents, inputs, attrs, outputs)
    args = (*_saved_args(op, inputs, outputs), *attrs)
    total = None
    for formula, t in zip(op.node.formulas, tangents):
        if t is None or formula is None:
            continue
        term = formula(_m, t if t.shape == shape else t.expand(shape), *args)
        total = term if total is None else total + term
    return (total,)


def _through_backward(op, tangents, inputs, attrs, outputs):
    """J v = d/du <Jᵀu, v>: the row's backward formulas, recorded on a stand-in node, differentiated in u."""
    edges = tuple(_WANTED if t is not None else (None, 0) for t in tangents)
    node = new_node(op.node, edges, _saved_args(op, inputs, outputs), attrs)
    node._meta = _broadcast_meta(inputs, outputs[0]) if op.broadcasts else None
    # Jᵀu is linear in u, so any u gives the same derivative: ones, where formulas that treat
    # g's zeros apart (logcumsumexp's signs) are smooth
    us = [ones_like(out).requires_grad_() if _differentiable(out) else None for out in outputs]
    with grad_mode.enable_grad():
        if len(outputs) == 1:
            grads = node.apply((us[0],), _m, True)
        else:
            grads = node.apply_outputs(us, _m, True)
        total = None
        for gi, t in zip(grads, tangents):
            if gi is None or t is None:
                continue
            term = (gi * t).sum()
            total = term if total is None else total + term
        wanted = [u for u in us if u is not None]
        if total is None or not total.requires_grad:
            return [None if u is None else zeros_like(u) for u in us]
        found = grad(total, wanted, create_graph=True, allow_unused=True, materialize_grads=True)
    found = iter(found)
    return [None if u is None else next(found) for u in us]
