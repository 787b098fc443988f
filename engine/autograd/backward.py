"""The backward executor: a dependency-counted run over the graph from the roots.

Gradients flow as raw arrays unless `create_graph=True`, when they are Tensors and every
formula is recorded (so the gradient has a graph of its own). Hooks, retain_grad and
`autograd.grad`'s capture points are applied as a node's gradients become complete.
"""

from __future__ import annotations

import weakref

import numpy

from .. import backend
from ..ops.namespaces import TENSOR_MATH, array_math
from ..tensor import Tensor, wrap
from . import anomaly, grad_mode
from .node import Node, as_tensor_or_none

ndarray = numpy.ndarray


def _namespace(grads, create_graph, m, array_class):
    """The math namespace for a node's gradients, and the class it was chosen for.

    Tensors under create_graph; else the namespace of the gradients' array module, which
    changes along a graph that crosses devices (so it is looked up again when the class does).
    """
    g = next((g for g in grads if g is not None), None)
    if g is None:
        return m, array_class
    return (TENSOR_MATH if create_graph else array_math(g)), g.__class__


def _to_mode(g, create_graph):
    """A gradient in the executor's representation: Tensor or raw array."""
    if create_graph:
        return g if isinstance(g, Tensor) else wrap(g)
    return g._data if isinstance(g, Tensor) else g


# ------------------------------------------------------------------------ leaves and edges


class AccumulateGrad(Node):
    """The sink for a leaf: adds the incoming gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable

    def name(self) -> str:
        return "engine::autograd::AccumulateGrad"

    def apply(self, grads, m, create_graph):
        accumulate_into(self.variable, grads[0], create_graph)
        return ()


def accumulator_of(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, shared by every graph that uses the leaf while alive."""
    ref = tensor._acc
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._acc = weakref.ref(node)
    return node


NO_EDGE = (None, 0)


def edge_of(x):
    """Where a gradient for `x` goes: (its grad_fn, output_nr), its AccumulateGrad, or nowhere."""
    if not isinstance(x, Tensor):
        return NO_EDGE
    fn = x.grad_fn
    if fn is not None:
        return (fn, x._output_nr)
    # A leaf view of a base that requires grad was made in no_grad: no edge, as in torch.
    if x._rg and (x._base is None or not x._base._rg):
        return (accumulator_of(x), 0)
    return NO_EDGE


# ---------------------------------------------------------------------- leaf accumulation


def accumulate_into(variable, g, create_graph) -> None:
    """Add g into variable.grad as PyTorch does: in place when no graph is being built."""
    if g is None:
        return
    if anomaly.state[0] and anomaly.observer is not None:
        anomaly.observer.accumulating(variable, g)
    if variable._hooks:
        g = _run_tensor_hooks(variable._hooks, g, create_graph)
    old = variable._grad
    if create_graph:
        g = g if isinstance(g, Tensor) else wrap(g)
        variable._grad = g if old is None else old + g
        return
    if isinstance(g, Tensor):
        g = g._data
    if old is None:
        fresh = wrap(
            g.copy()
            if g.__class__ is ndarray or backend.is_array(g)
            else backend.xp_of(variable._data).asarray(g)
        )
        if fresh._data.dtype is not variable._data.dtype:  # `!=` misses bfloat16's tag
            fresh._data = fresh._data.astype(variable._data.dtype)
        variable._grad = fresh
    elif old.grad_fn is not None or old._rg:
        variable._grad = old.detach() + wrap(g)
    else:
        old._data += g
        old._vc.version += 1


def _run_tensor_hooks(hooks: dict, g, create_graph):
    for hook in list(hooks.values()):
        as_tensor = g if isinstance(g, Tensor) else wrap(g)
        result = hook(as_tensor)
        if result is not None:
            g = _to_mode(result, create_graph)
    return g


# ------------------------------------------------------------------------------ running


def run(roots, grads, retain_graph, create_graph, inputs=None, capture=False):
    """Propagate `grads` from `roots` (a list of (node, output_nr)) through the graph.

    `inputs` restricts the work to what reaches those tensors; with `capture` the
    gradients reaching them are returned instead of being accumulated into `.grad`.
    """
    targets = None
    cap = None
    if inputs is not None:
        targets = {}
        for i, t in enumerate(inputs):
            targets.setdefault(edge_of(t), []).append(i)
        if capture:
            cap = [None] * len(inputs)
    nodes = _needed_nodes(roots, targets, capture)
    deps = _dependencies(roots, nodes)

    buffers: dict = {}
    for (node, nr), g in zip(roots, grads):
        _add_to_buffer(buffers, node, nr, g)
    ready = []
    seen_roots = set()
    for node, _ in roots:
        if node not in seen_roots and deps.get(node, 0) == 0:
            seen_roots.add(node)
            ready.append(node)

    m = None
    array_class = None  # the class of gradient `m` was chosen for (numpy's or cupy's ndarray, Tensor)
    checked = anomaly.state[0]
    watch = anomaly.observer if checked else None
    if watch is not None:
        watch.backward_begin(roots, retain_graph, inputs, capture)
    prev_mode = grad_mode.state[0]
    grad_mode.state[0] = bool(create_graph)
    try:
        while ready:
            node = ready.pop()
            grads_in = buffers.pop(node, None) or [None] * node.num_outputs
            hooked = node._hooks is not None
            if hooked:
                grads_in = _before_node(node, grads_in, create_graph)
            if targets is not None:
                _at_target(node, grads_in, targets, inputs, cap, create_graph)
                if node not in nodes or (capture and node.__class__ is AccumulateGrad):
                    continue
            if (
                grads_in[0] is None
                and (len(grads_in) == 1 or all(g is None for g in grads_in))
                and not node.runs_without_grads
            ):
                outputs = [None] * len(node.next_functions)
            else:
                if grads_in[0].__class__ is not array_class:  # the first node, or .to() changed device
                    m, array_class = _namespace(grads_in, create_graph, m, array_class)
                if checked or hooked:
                    outputs = _call(node, grads_in, m, create_graph)
                else:
                    outputs = node.apply(grads_in, m, create_graph)
            if not retain_graph:
                node.release()
                if watch is not None:
                    watch.released(node)
            k = 0
            for child, nr in node.next_functions:  # (a loop without zip: cheaper per node)
                g = outputs[k]
                k += 1
                if child is None or (nodes is not None and child not in nodes):
                    continue
                if g is not None:
                    slot = buffers.get(child)
                    if slot is None:
                        slot = buffers[child] = [None] * child.num_outputs
                    old = slot[nr]
                    slot[nr] = g if old is None else old + g
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    ready.append(child)
    finally:
        grad_mode.state[0] = prev_mode
        if watch is not None:
            watch.backward_end(inputs, cap)
    return cap


def _at_target(node, grads, targets, inputs, cap, create_graph) -> None:
    """Capture (autograd.grad) or accumulate (backward(inputs=)) at the inputs' positions."""
    for nr, g in enumerate(grads):
        positions = targets.get((node, nr))
        if positions is None:
            continue
        for p in positions:
            if cap is not None:
                cap[p] = g
            elif node.__class__ is not AccumulateGrad:
                accumulate_into(inputs[p], g, create_graph)


def _add_to_buffer(buffers, node, nr, g):
    slot = buffers.get(node)
    if slot is None:
        slot = buffers[node] = [None] * node.num_outputs
    old = slot[nr]
    slot[nr] = g if old is None else old + g


def _before_node(node, grads, create_graph):
    """Tensor hooks, retain_grad and node pre-hooks, in PyTorch's order."""
    hooks = node._hooks
    grads = list(grads)
    for nr, table in hooks.tensor.items():
        if table and grads[nr] is not None:
            grads[nr] = _run_tensor_hooks(table, grads[nr], create_graph)
    for nr, ref in hooks.retained.items():
        t = ref()
        if t is None or grads[nr] is None or t.grad_fn is not node:
            continue
        g = grads[nr]
        g = g.clone() if create_graph else wrap(g.copy())
        t._grad = g if t._grad is None else t._grad + g
    for hook in list(hooks.pre.values()):
        result = hook(tuple(as_tensor_or_none(g) for g in grads))
        if result is not None:
            grads = [None if g is None else _to_mode(g, create_graph) for g in result]
    return grads


def _call(node, grads, m, create_graph):
    try:
        outputs = node.apply(grads, m, create_graph)
    except Exception as exc:
        if anomaly.state[0]:
            anomaly.backward_failed(node, exc)
        raise
    if anomaly.state[0]:
        anomaly.backward_done(node, grads, outputs)
    if node._hooks is not None and node._hooks.post:
        wrapped_in = tuple(as_tensor_or_none(g) for g in outputs)
        wrapped_out = tuple(as_tensor_or_none(g) for g in grads)
        for hook in list(node._hooks.post.values()):
            result = hook(wrapped_in, wrapped_out)
            if result is not None:
                wrapped_in = tuple(result)
        outputs = [None if g is None else _to_mode(g, create_graph) for g in wrapped_in]
    return outputs


def _dependencies(roots, nodes):
    """How many edges lead into each node (from nodes that will run)."""
    deps: dict = {}
    stack = [node for node, _ in roots]
    for node in stack:
        deps.setdefault(node, 0)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None or (nodes is not None and child not in nodes):
                continue
            count = deps.get(child)
            if count is None:
                deps[child] = 1
                stack.append(child)
            else:
                deps[child] = count + 1
    return deps


def _needed_nodes(roots, targets, capture):
    """With `inputs`, only the nodes from which a target can be reached; else None (all)."""
    if targets is None:
        return None
    target_nodes = {node for node, _ in targets}
    needed: set = set()
    visited: set = set()
    for root, _ in roots:
        if root in visited:
            continue
        stack = [(root, iter(root.next_functions))]
        visited.add(root)
        while stack:
            node, children = stack[-1]
            advanced = False
            for child, _ in children:
                if child is not None and child not in visited:
                    visited.add(child)
                    stack.append((child, iter(child.next_functions)))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            if node in target_nodes or any(c in needed for c, _ in node.next_functions if c is not None):
                needed.add(node)
    return needed


# ------------------------------------------------------------------------- public entry


def _make_grads(tensors, grad_tensors, create_graph, for_grad):
    out = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if g is None:
            if t._rg and t._data.size != 1:
                err = RuntimeError("grad can be implicitly created only for scalar outputs")
                err.tensor = t  # for gradcli anomaly: which tensor, created where
                raise err
            if not t.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                )
            g = backend.xp_of(t._data).ones_like(t._data)
        else:
            if not isinstance(g, Tensor):  # a number or nested list, as torch.tensor(g) reads it
                g = wrap(backend.to_device(numpy.asarray(g, dtype=t._data.dtype), t.device))
            if g.shape != t.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                    f"has a shape of {t.shape}."
                )
        out.append(_to_mode(g, create_graph))
    return out


def _roots(tensors):
    roots = []
    for i, t in enumerate(tensors):
        if not t._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(edge_of(t))
    return roots


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """engine.autograd.backward: accumulate d(sum of tensors . grad_tensors)/d(leaf) into .grad."""
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    tensors = tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(
            f"grad_tensors has {len(grad_tensors)} elements, but tensors has {len(tensors)} elements"
        )
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    roots = _roots(tensors)
    grads = _make_grads(tensors, grad_tensors, create_graph, False)
    run(roots, grads, retain_graph, create_graph, inputs=inputs, capture=False)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """engine.autograd.grad: the gradients of outputs w.r.t. inputs, returned, not accumulated."""
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    single_input = isinstance(inputs, Tensor)
    inputs = (inputs,) if single_input else tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = _roots(outputs)
    grads = _make_grads(outputs, grad_outputs, create_graph, True)
    captured = run(roots, grads, retain_graph, create_graph, inputs=inputs, capture=True)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = wrap(backend.xp_of(t._data).zeros_like(t._data))
            result.append(g)
            continue
        result.append(g if isinstance(g, Tensor) else wrap(g))
    return tuple(result)
