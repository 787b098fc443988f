"""engine.autograd.functional: jacobian, hessian, vjp, jvp, hvp and vhp of a function, as torch's.

Everything is built on reverse mode (`autograd.grad`): a Jacobian row by row, forward-mode
products (`jvp`, `hvp`) with the double-backward trick (differentiate the vector-Jacobian
product with respect to the vector it was taken with), so every op's formulas being twice
differentiable is what makes them work. Inputs are taken as a Tensor or a tuple of Tensors and
results come back in the same shape of nesting; `create_graph=True` keeps the results
differentiable, `strict=True` raises torch's errors where a result would be independent of an
input (and so silently zero). `vectorize=True` takes every row of a Jacobian at once, as torch
does: one backward of a batch of basis vectors through torch's older vmap (`legacy_vmap`: without
torch.func's rules for custom Functions, as torch's `_vmap_internals`; with `create_graph=True`,
whose rows must stay differentiable, the rows are taken one by one and arranged as torch's are).
`strategy="forward-mode"` is torch's vmap over forward AD (`forward_jvp` of the inputs' basis
vectors, all at once), with torch's refusals: only vectorized, without create_graph or strict.
"""

from __future__ import annotations

from ..func.basis import standard_basis
from ..func.jvp import forward_jvp
from ..func.vmap import legacy_vmap
from ..ops import creation
from ..ops.shaping.core import stack
from ..tensor import Tensor
from . import grad_mode
from .backward import grad as autograd_grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# --------------------------------------------------------------------------- helpers


def _as_tuple(value, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """(whether `value` was a tuple, its Tensors as a tuple); torch's TypeError for anything else."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"the value at index {i}" if was_tuple else f"the given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but {where} "
                f"has type {type(item)}."
            )
    return was_tuple, items


def _unpack(result, was_tuple):
    """Undo the tupling: `was_tuple` is one flag, or (outputs', inputs') for a nested result."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _prepare(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh leaves to differentiate with respect to; under create_graph an input that requires grad
    stays connected to its history (a view of it)."""
    return tuple(
        t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
        for t in tensors
    )


def _finish(tensors, create_graph: bool):
    """Results detached unless create_graph (nested tuples too)."""
    if isinstance(tensors[0], Tensor):
        return tensors if create_graph else tuple(t.detach() for t in tensors)
    return tuple(_finish(t, create_graph) for t in tensors)


def _check_v(v: tuple, other: tuple, other_is_tuple: bool) -> None:
    if len(other) != len(v):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            where = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got {a.size()}.")


def _take_v(
    v, against: tuple, against_is_tuple: bool, create_graph: bool, fn_name: str, what: str
) -> tuple | None:
    """The vector of a product, checked against the tensors it multiplies; None only for one element."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _check_v(v, against, against_is_tuple)
        return v
    if len(against) != 1 or against[0].numel() != 1:
        raise RuntimeError(
            f"The vector v can only be None if the {what} a single Tensor with a single element."
        )
    return None


_INDEPENDENT = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be "
    "computed in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
    "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with "
    "respect to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
    "that your function is twice differentiable and that the jacobian depends on the inputs (this would be "
    "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the "
    "input. This is not allowed in strict mode. You should ensure that your function is thrice "
    "differentiable and that the hessian depends on the inputs.",
}
_UNUSED = "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode."


def _check_requires_grad(tensors, kind: str, strict: bool) -> None:
    """strict mode: every tensor exists and requires grad, or torch's error for `kind`."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(_UNUSED.format(i=i))
        if not t.requires_grad:
            raise RuntimeError(_INDEPENDENT[kind].format(i=i))


def _grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph=False, retain_graph=None) -> tuple:
    """autograd.grad of the outputs that require grad (None for every input when none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return autograd_grad(
        [o for o, _ in kept],
        inputs,
        [g for _, g in kept],
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )


_MISSING = {
    "back": _UNUSED,
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
    "using the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
    "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
    "grad_jacobian. This is not allowed in strict mode as it prevents from using the double backward trick to "
    "replace forward mode AD.",
}


def _zeros_for_missing(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros where a gradient is None (strict: torch's error instead, naming the `stage`)."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            g = creation.zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This is not allowed in "
                "strict mode when create_graph=True."
            )
        out.append(g)
    return tuple(out)


def _call(func, inputs: tuple, fn_name: str, strict: bool) -> tuple[bool, tuple]:
    was_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return was_tuple, outputs


def _single_output(fn_name: str, was_tuple: bool, outputs: tuple) -> None:
    if was_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single element"
        )


# --------------------------------------------------------------------------- products


def _setup(fn_name: str, func, inputs, v, create_graph: bool, strict: bool):
    """Inputs as fresh leaves, v checked (against the outputs for vjp, else the inputs, in torch's order),
    func called: (inputs_tuple, inputs, v, outputs_tuple, outputs)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    if fn_name == "vjp":
        outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
        v = _take_v(v, outputs, outputs_tuple, create_graph, fn_name, "user-provided function returns")
        return inputs_tuple, inputs, v, outputs_tuple, outputs
    v = _take_v(v, inputs, inputs_tuple, create_graph, fn_name, "input to the user-provided function is")
    outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    return inputs_tuple, inputs, v, outputs_tuple, outputs


def _setup_with_gradient(fn_name: str, func, inputs, v, create_graph: bool, strict: bool):
    """`_setup` for hvp / vhp (a single-element output), and the gradient, recorded: (..., outputs, jac)."""
    setup = _setup(fn_name, func, inputs, v, create_graph, strict)
    _single_output(fn_name, setup[3], setup[4])
    jac = _grad(setup[4], setup[1], create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return (*setup, jac)


def _last_grads(outputs: tuple, wrt: tuple, v, refs: tuple, stage: str, create_graph: bool, strict: bool):
    """The product's final backward (recorded under create_graph, else in the caller's grad mode)."""
    with grad_mode.set_grad_enabled(True if create_graph else grad_mode.is_grad_enabled()):
        grads = _grad(outputs, wrt, v, create_graph=create_graph)
        return _zeros_for_missing(grads, refs, strict, create_graph, stage)


def _results(outputs: tuple, outputs_tuple: bool, product: tuple, product_tuple: bool, create_graph: bool):
    return (
        _unpack(_finish(outputs, create_graph), outputs_tuple),
        _unpack(_finish(product, create_graph), product_tuple),
    )


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs = _setup("vjp", func, inputs, v, create_graph, strict)
    product = _last_grads(outputs, inputs, v, inputs, "back", create_graph, strict)
    return _results(outputs, outputs_tuple, product, inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    with grad_mode.enable_grad():
        _, inputs, v, outputs_tuple, outputs = _setup("jvp", func, inputs, v, create_graph, strict)
        dummies = tuple(creation.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    product = _last_grads(grad_inputs, dummies, v, outputs, "back_trick", create_graph, strict)
    return _results(outputs, outputs_tuple, product, outputs_tuple, create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a function with a single-element output."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _setup_with_gradient(
            "vhp", func, inputs, v, create_graph, strict
        )
    product = _last_grads(jac, inputs, v, inputs, "double_back", create_graph, strict)
    return _results(outputs, outputs_tuple, product, inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a function with a single-element output, by the double-backward trick."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _setup_with_gradient(
            "hvp", func, inputs, v, create_graph, strict
        )
        dummies = tuple(creation.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    product = _last_grads(double_back, dummies, v, inputs, "double_back_trick", create_graph, strict)
    return _results(outputs, outputs_tuple, product, inputs_tuple, create_graph)


# --------------------------------------------------------------------------- matrices


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at `inputs`: for output i and input j, a tensor of shape out_i.shape + in_j.shape
    (a Tensor, a tuple, or a tuple of tuples, following how inputs and outputs were given)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has more '
            'outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use '
            '"reverse-mode".'
        )
    if strategy == "forward-mode":
        _forward_mode_checks(inputs, create_graph, strict, vectorize)
        return _jacobian_forward(func, inputs)
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError(
                "engine.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                "together. Please either set `strict=False` or `vectorize=False`."
            )
        if vectorize:
            rows = _jacobian_vectorized(outputs, inputs, create_graph)
        else:
            rows = tuple(
                _jacobian_of_output(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs)
            )
        return _unpack(_finish(rows, create_graph), (outputs_tuple, inputs_tuple))


def _forward_mode_checks(inputs, create_graph: bool, strict: bool, vectorize: bool) -> None:
    """torch's refusals for strategy="forward-mode", in its order."""
    if create_graph:
        raise NotImplementedError(
            'engine.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mode"` are not '
            'supported together (yet). Please either set `create_graph=False` or `strategy="reverse-mode"`.'
        )
    if strict:
        raise RuntimeError(
            'engine.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not supported '
            'together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.'
        )
    _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly implemented for "
            "`vectorize=True`."
        )


def _jacobian_forward(func, inputs):
    """torch's forward-mode Jacobian: one jvp per basis vector of the inputs, all at once under vmap; the
    columns come back along dim 0 and are moved behind the output's dims."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    numels = [inp.numel() for inp in inputs]
    found = []

    def outputs_of(*duals):
        was_tuple, outputs = _as_tuple(func(*duals), "outputs of the user-provided function", "jacobian")
        found.append(was_tuple)
        return outputs

    def columns(*tangents):
        outputs, jv = forward_jvp(outputs_of, inputs, tangents)
        found.append(outputs)
        return jv

    stacked = legacy_vmap(columns)(*standard_basis(list(inputs)))
    outputs_tuple, outputs = found
    blocks = [  # lists, as torch's forward mode gives where inputs or outputs were tuples
        [
            jac.permute(*range(1, jac.dim()), 0).reshape(*out.shape, *inp.shape).detach()
            for jac, inp in zip(column.split(numels, dim=0), inputs)
        ]
        for column, out in zip(stacked, outputs)
    ]
    return _unpack(blocks, (outputs_tuple, inputs_tuple))


def _element_grads(out: Tensor, inputs: tuple, create_graph: bool):
    """The gradient of each element of `out` with respect to the inputs: one backward per element."""
    flat = out.reshape(-1)
    for k in range(out.numel()):
        yield _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)


def _jacobian_vectorized(outputs: tuple, inputs: tuple, create_graph: bool) -> tuple:
    """What torch's vectorized Jacobian gives: per input, one block stacking the rows of every output, split
    per output; so a block is differentiable whenever any row for that input is (zero blocks included)."""
    columns = (
        _batched_rows(outputs, inputs) if not create_graph else _stacked_rows(outputs, inputs, create_graph)
    )
    blocks: list[list] = [[] for _ in outputs]
    for stacked, inp in zip(columns, inputs):
        start = 0
        for i, out in enumerate(outputs):
            blocks[i].append(stacked[start : start + out.numel()].view(out.size() + inp.size()))
            start += out.numel()
    return tuple(tuple(row) for row in blocks)


def _batched_rows(outputs: tuple, inputs: tuple) -> list:
    """Per input, the rows of every output's Jacobian stacked: one backward of the basis vectors under vmap."""
    total = sum(out.numel() for out in outputs)
    basis = creation.eye(total, dtype=outputs[0].dtype, device=outputs[0].device)
    cotangents, start = [], 0
    for out in outputs:
        cotangents.append(basis[:, start : start + out.numel()].reshape(total, *out.shape))
        start += out.numel()

    def vjp_rows(*vectors):
        grads = _grad(outputs, inputs, vectors, create_graph=True, retain_graph=True)
        return tuple(creation.zeros_like(inp) if g is None else g for g, inp in zip(grads, inputs))

    return list(legacy_vmap(vjp_rows)(*cotangents))


def _stacked_rows(outputs: tuple, inputs: tuple, create_graph: bool) -> list:
    """Per input, the rows of every output's Jacobian stacked, each row one recorded backward."""
    rows = [grads for out in outputs for grads in _element_grads(out, inputs, create_graph)]
    columns = []
    for j, inp in enumerate(inputs):
        column = [grads[j] for grads in rows]
        if all(g is None for g in column):
            columns.append(
                creation.zeros((len(column),) + tuple(inp.shape), dtype=inp.dtype, device=inp.device)
            )
        else:
            columns.append(stack([creation.zeros_like(inp) if g is None else g for g in column], dim=0))
    return columns


def _jacobian_of_output(i: int, out: Tensor, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """d out / d input_j for every j, one output element (one backward) at a time."""
    columns: list[list] = [[] for _ in inputs]
    for grads in _element_grads(out, inputs, create_graph):
        for j, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is independent of input {j}. This is not "
                        "allowed in strict mode."
                    )
                g = creation.zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(  # torch names the output's index here
                    f"The jacobian of the user-provided function is independent of input {i}. This is not "
                    "allowed in strict mode when create_graph=True."
                )
            columns[j].append(g)
    return tuple(stack(column, dim=0).view(out.size() + inp.size()) for column, inp in zip(columns, inputs))


def hessian(
    func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"
):
    """The Hessian of a function with a single-element output: for inputs i and j, in_i.shape + in_j.shape."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        was_tuple, outputs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outputs, "outputs", strict)
        if was_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single element"
            )
        return out.squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(
        gradient,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpack(result, (inputs_tuple, inputs_tuple))
