"""The backward executor: a dependency-counted run over the graph from the roots.

Gradients flow as raw arrays unless `create_graph=True`, when they are Tensors and every
formula is recorded (so the gradient has a graph of its own). Around each node the hooks run
in PyTorch's order: hooks registered through tensors (a leaf's live on the leaf), retain_grad,
the node's pre-hooks, the node, its post-hooks. With `inputs=` only what leads to them runs
(PyTorch's exec_info); `autograd.grad` captures the gradients reaching them instead.
"""

from __future__ import annotations

import itertools
import sys
import threading
import warnings
import weakref
from collections.abc import Mapping

import numpy

from .. import backend
from ..ops import namespaces
from ..ops.namespaces import array_math
from ..tensor import Size, Tensor, tp_name, wrap
from ..warn_once import warn_once
from . import anomaly, grad_mode
from .node import Node, NodeHooks, as_tensor_or_none, checked_hook_result, checked_hook_results

ndarray = numpy.ndarray


#: What engine.func (above this layer) hands over at import through `use_vmap`: how
#: `grad(is_grads_batched=True)` runs a backward per vector of the gradients' batch,
#: `(run(grads, retain_graph), grads, retain_graph, create_graph) -> gradients`, and whether a
#: vmap is running (gradients then flow as Tensors whatever create_graph says: a batch exists
#: only as a Tensor).
VMAP: list = [None, lambda: False]

#: Called with the tensors of every `backward()` and `grad()` call, before it runs: how a tool
#: (gradcli graph) learns which results a script differentiated. Empty, it costs one test a call.
call_watchers: list = []


def use_vmap(map_gradients, running) -> None:
    VMAP[0], VMAP[1] = map_gradients, running


def _namespace(grads, create_graph, m, array_class):
    """The math namespace for a node's gradients, and the class it was chosen for.

    Tensors under create_graph; else the namespace of the gradients' array module, which
    changes along a graph that crosses devices (so it is looked up again when the class does).
    """
    g = next((g for g in grads if g is not None), None)
    if g is None:
        return m, array_class
    return (namespaces.TENSOR_MATH if create_graph else array_math(g)), g.__class__


def _to_mode(g, create_graph):
    """A gradient in the executor's representation: Tensor or raw array."""
    if create_graph:
        return g if isinstance(g, Tensor) else wrap(g)
    return g._data if isinstance(g, Tensor) else g


# ------------------------------------------------------------------------ leaves and edges


class AccumulateGrad(Node):
    """The sink for a leaf: adds the incoming gradient into `variable.grad`.

    Its hook table always exists, so the executor takes the hooked path for it: the leaf's
    tensor hooks (kept on the leaf, which outlives this node) run there before the node's
    pre-hooks, as in PyTorch. Leaves are few; the cost is not on the per-op path.
    """

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable
        self._hooks = NodeHooks()

    def name(self) -> str:
        return "engine::autograd::AccumulateGrad"

    def apply(self, grads, m, create_graph):
        variable = self.variable
        if grads[0] is None or not variable._rg:  # PyTorch skips a leaf that stopped requiring grad
            return ()
        accumulate_into(variable, grads[0], create_graph)
        if variable._post_acc_hooks:
            _run_post_accumulate_hooks(variable._post_acc_hooks, variable)
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
    """Add g into variable.grad as PyTorch's AccumulateGrad does.

    Without a graph: a copy first, then in place (even into a grad that has history: torch
    adds under no-grad mode). Under create_graph: the first gradient is copied into a tensor
    like the leaf (`CopyBackwards`, PyTorch's `new_empty_strided(...).copy_(grad)`), later
    ones added out of place (`AddBackward0`), so x.grad's graph reads as torch's.
    """
    if g is None:
        return
    if anomaly.state[0] and anomaly.observer is not None:
        anomaly.observer.accumulating(variable, g)
    old = variable._grad
    if create_graph:
        g = g if isinstance(g, Tensor) else wrap(g)
        variable._grad = _recorded_copy(variable, g) if old is None else old + g
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
    else:
        old._data += g
        old._vc.version += 1


def _recorded_copy(variable, g: Tensor) -> Tensor:
    """g copied into a new tensor shaped, typed and placed like the leaf; the copy is recorded."""
    fresh = wrap(backend.xp_of(variable._data).empty_like(variable._data))
    return fresh.copy_(g)


def _run_tensor_hooks(hooks: dict, g, create_graph):
    """hook(grad) for each hook, None included (no gradient reached the tensor), as in torch."""
    for hook in list(hooks.values()):
        result = checked_hook_result(hook, g, hook(as_tensor_or_none(g)))
        if result is not None:
            g = _to_mode(result, create_graph)
    return g


def _run_post_accumulate_hooks(hooks: dict, variable) -> None:
    """hook(leaf) after its .grad was updated; PyTorch's errors for a hook that returns something."""
    argument = variable
    replaced = False
    for hook in list(hooks.values()):
        result = hook(argument)
        if result is None or result is argument:
            continue
        if not isinstance(result, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{tp_name(result)}'")
        argument = result
        replaced = True
    if replaced:
        raise RuntimeError("Tensor post accumulate grad hooks should return None.")


# ------------------------------------------------------------------------------ running


class _Nesting(threading.local):
    """How many runs are in progress on this thread (a custom backward may start another), and
    the innermost one's task: (id, the nodes it reaches, its `_Plan` or None)."""

    depth = 0
    task = None


_task_ids = itertools.count()


def current_graph_task_id() -> int:
    """An id of the backward run in progress on this thread (-1 outside any): hooks tell runs apart."""
    task = _nesting.task
    return -1 if task is None else task[0]


def will_engine_execute_node(node) -> bool:
    """Whether the backward run in progress will execute `node` (torch's _will_engine_execute_node)."""
    task = _nesting.task
    if task is None:
        raise RuntimeError("_get_should_execute_nodes should only be called during the backward pass")
    _, deps, plan = task
    if node not in deps:
        return False
    if plan is None:
        return True
    if node not in plan.execute:
        return False
    if plan.captures is not None and _is_leaf_node(node) and any(n is node for n, _ in plan.captures):
        raise RuntimeError(
            "A leaf node was passed to _will_engine_execute_node but we are "
            "currently running autograd.grad(). This is currently not supported."
        )
    return True


def _is_leaf_node(node) -> bool:
    """A node with no edge onward (torch's topological_nr 0): an AccumulateGrad, or a graph's end."""
    return all(child is None for child, _ in node.next_functions)


_nesting = _Nesting()
# A nested run moves to a new thread when this thread already has MAX_NESTED_RUNS (PyTorch's
# MAX_DEPTH for reentrant backward) or is within FRAMES_KEPT_FREE frames of the recursion limit.
MAX_NESTED_RUNS = 60
FRAMES_KEPT_FREE = 250
HANDOFF_STACK_BYTES = 64 * 1024 * 1024


def run(roots, grads, retain_graph, create_graph, inputs=None, capture=False):
    """Propagate `grads` from `roots` (a list of (node, output_nr)) through the graph.

    `inputs` restricts the work to what reaches those tensors; with `capture` the
    gradients reaching them are returned instead of being accumulated into `.grad`.
    A run started from inside another (reentrant backward) that finds the Python stack
    nearly used up continues on a fresh thread, as PyTorch hands deep reentrant backwards
    to another worker: thousands of nested levels work.
    """
    args = (roots, grads, retain_graph, create_graph, inputs, capture)
    depth = _nesting.depth
    if depth and (depth >= MAX_NESTED_RUNS or _frames_left() < FRAMES_KEPT_FREE):
        return _on_fresh_thread(args)
    _nesting.depth = depth + 1
    try:
        return _execute(*args)
    finally:
        _nesting.depth = depth


def _frames_left() -> int:
    """How many more Python frames this thread may stack before RecursionError (walked: nested runs only)."""
    depth = 0
    frame = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return sys.getrecursionlimit() - depth


def _on_fresh_thread(args):
    """`run(*args)` on a new thread with a stack of its own; this thread waits for it."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = run(*args)
        except BaseException as exc:  # handed to the waiting thread, which raises it
            outcome["error"] = exc

    previous = threading.stack_size(HANDOFF_STACK_BYTES)
    try:
        worker = threading.Thread(target=target, name="engine-reentrant-backward")
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if "error" in outcome:
        raise outcome.pop("error")
    return outcome["value"]


class _Plan:
    """What a run with `inputs` does (PyTorch's exec_info).

    `execute`: the nodes that get their gradients; `needed`: those among them that run (the
    others only hold an input of autograd.grad); `captures`: (node, output_nr) -> the input
    positions whose gradient is taken there (autograd.grad only); `captured`: what was taken.
    """

    __slots__ = ("execute", "needed", "captures", "captured")

    def __init__(self, roots, inputs, capture):
        targets: dict = {}
        for i, t in enumerate(inputs):
            targets.setdefault(edge_of(t), []).append(i)
        target_nodes = {node for node, _ in targets if node is not None}
        self.captures = targets if capture else None
        self.captured = [None] * len(inputs) if capture else None
        self.execute, self.needed = _reach(roots, target_nodes, capture)


def _reach(roots, target_nodes, capture):
    """The nodes to execute and those to run, found depth first from the roots.

    A node runs when one of its children is executed; with `capture` (autograd.grad) a target
    is executed (its gradient taken) without running unless it leads to another target; for
    backward(inputs=) a target runs (accumulating into .grad).
    """
    execute: set = set()
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
            is_target = node in target_nodes
            if (is_target and not capture) or any(
                c in execute for c, _ in node.next_functions if c is not None
            ):
                needed.add(node)
                execute.add(node)
            elif is_target:
                execute.add(node)
    return execute, needed


def _execute(roots, grads, retain_graph, create_graph, inputs, capture):
    backend.quiet_numpy()  # a backward in a new thread: numpy's error state is per thread
    # gradients as Tensors: to record the formulas, or while a vmap runs (a batch is never a raw array)
    tensors = bool(create_graph) or VMAP[1]()
    grads = [None if g is None else _to_mode(g, tensors) for g in grads]
    plan = None if inputs is None else _Plan(roots, inputs, capture)
    nodes = None if plan is None else plan.execute
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
    outer_task = _nesting.task
    _nesting.task = (next(_task_ids), deps, plan)
    capturing = plan is not None and plan.captures is not None
    try:
        while ready:
            node = ready.pop()
            grads_in = buffers.pop(node, None) or [None] * node.num_outputs
            if plan is not None:
                if node not in nodes:
                    continue  # a root that leads to no input
                if plan.captures is not None and _capture(node, grads_in, plan, tensors):
                    continue
            hooked = node._hooks is not None
            if hooked:
                grads_in = _before_node(node, grads_in, tensors)
            if (
                grads_in[0] is None
                and (len(grads_in) == 1 or all(g is None for g in grads_in))
                and not node.runs_without_grads
            ):
                outputs = [None] * len(node.next_functions)
            else:
                if grads_in[0].__class__ is not array_class:  # the first node, or .to() changed device
                    m, array_class = _namespace(grads_in, tensors, m, array_class)
                if capturing and not _all_executed(node.next_functions, nodes):
                    outputs = _apply_pruned(node, grads_in, m, tensors, nodes, checked or hooked)
                elif checked or hooked:
                    outputs = _call(node, grads_in, m, tensors)
                else:
                    outputs = node.apply(grads_in, m, tensors)
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
    except BaseException as exc:
        if watch is not None:
            watch.raised(exc)  # before the script can catch it
        raise
    finally:
        grad_mode.state[0] = prev_mode
        _nesting.task = outer_task
        if watch is not None:
            watch.backward_end(inputs, None if plan is None else plan.captured)
    return None if plan is None else plan.captured


def _all_executed(edges, nodes) -> bool:
    for child, _ in edges:
        if child is not None and child not in nodes:
            return False
    return True


def _apply_pruned(node, grads, m, create_graph, nodes, through_call: bool):
    """The node run without the edges that lead to no input of autograd.grad: as torch's
    should_compute_output, no formula runs for a gradient that would be thrown away."""
    edges = node.next_functions
    node.next_functions = tuple(e if e[0] is None or e[0] in nodes else (None, 0) for e in edges)
    try:
        return _call(node, grads, m, create_graph) if through_call else node.apply(grads, m, create_graph)
    finally:
        node.next_functions = edges


def _capture(node, grads, plan, create_graph) -> bool:
    """Take autograd.grad's gradients at `node`; True when the node itself is not to run.

    As in PyTorch: a node that only holds inputs has its tensor hooks and retain_grad run
    first, and the gradients are taken after them; a node that runs for other inputs hands
    over its gradients as they arrived, before any hook.
    """
    runs = node in plan.needed
    if not runs:
        grads = _tensor_pre_hooks(node, list(grads), create_graph)
    captures = plan.captures
    for nr, g in enumerate(grads):
        for position in captures.get((node, nr), ()):
            plan.captured[position] = g
    return not runs


def _add_to_buffer(buffers, node, nr, g):
    slot = buffers.get(node)
    if slot is None:
        slot = buffers[node] = [None] * node.num_outputs
    old = slot[nr]
    if g is not None:  # a root given twice, once with an undefined gradient (gradcheck's undefined-grad run)
        slot[nr] = g if old is None else old + g


def _tensor_pre_hooks(node, grads: list, create_graph) -> list:
    """Hooks registered through the tensors the node gives gradients to, then retain_grad.

    A leaf's hooks live on the leaf (its AccumulateGrad may be made again); a non-leaf's on
    the node that produced it, by output.
    """
    if node.__class__ is AccumulateGrad:
        table = node.variable._hooks
        if table:
            grads[0] = _run_tensor_hooks(table, grads[0], create_graph)
        return grads
    hooks = node._hooks
    if hooks is None:
        return grads
    for nr, table in hooks.tensor.items():
        if table:
            grads[nr] = _run_tensor_hooks(table, grads[nr], create_graph)
    for nr, ref in hooks.retained.items():
        t = ref()
        if t is None or grads[nr] is None or t.grad_fn is not node:
            continue
        g = grads[nr]
        g = g.clone() if create_graph else wrap(g.copy())
        t._grad = g if t._grad is None else t._grad + g
    return grads


def _before_node(node, grads, create_graph):
    """Tensor hooks, retain_grad and node pre-hooks, in PyTorch's order."""
    grads = _tensor_pre_hooks(node, list(grads), create_graph)
    for hook in list(node._hooks.pre.values()):
        given = tuple(as_tensor_or_none(g) for g in grads)
        result = hook(given)
        if result is not None:
            grads = [
                None if g is None else _to_mode(g, create_graph)
                for g in checked_hook_results(hook, given, result)
            ]
    return grads


def _call(node, grads, m, create_graph):
    running = anomaly.running  # the node the nodes made by this backward were induced by
    running.append(node)
    try:
        outputs = node.apply(grads, m, create_graph)
    except Exception as exc:
        if anomaly.state[0]:
            anomaly.backward_failed(node, exc)
        raise
    finally:
        running.pop()
    if anomaly.state[0]:
        anomaly.backward_done(node, grads, outputs)
    if node._hooks is not None and node._hooks.post:
        wrapped_in = tuple(as_tensor_or_none(g) for g in outputs)
        wrapped_out = tuple(as_tensor_or_none(g) for g in grads)
        for hook in list(node._hooks.post.values()):
            result = hook(wrapped_in, wrapped_out)
            if result is not None:
                wrapped_in = checked_hook_results(hook, wrapped_in, result)
        outputs = [None if g is None else _to_mode(g, create_graph) for g in wrapped_in]
    return outputs


def _dependencies(roots, nodes):
    """How many edges lead into each node (from nodes that will run).

    Each root is walked once, however often it is listed (backward([y, y]) adds both
    gradients into y's buffer, and y's children wait for y once).
    """
    deps: dict = {}
    stack = []
    for node, _ in roots:
        if node not in deps:
            deps[node] = 0
            stack.append(node)
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


# ------------------------------------------------------------------------- public entry


def _make_grads(tensors, grad_tensors, batched=False):
    """The root gradients: Tensors as given (cast to the outputs' dtypes), ones (a raw array) for a
    scalar output given None. `batched`: each Tensor's first dim is a batch (is_grads_batched)."""
    out = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if g is None:
            if t._rg and t._data.size != 1:
                err = RuntimeError("grad can be implicitly created only for scalar outputs")
                err.tensor = t  # for gradcli anomaly: which tensor, created where
                err.autograd_kind = "implicit-grad"
                raise anomaly.noted(err)
            if not t.dtype.is_floating_point:
                err = RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                )
                err.autograd_kind = "implicit-grad"  # for gradcli anomaly
                raise anomaly.noted(err)
            g = backend.xp_of(t._data).ones(t._data.shape, dtype=t._data.dtype)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
            first = g[0] if batched else g
            if first.shape != t.shape:
                raise RuntimeError(_shape_mismatch(i, first, t, batched))
            if g._data.dtype is not t._data.dtype:  # cast to the output's dtype, as torch's engine does
                g = g.to(t.dtype)
        out.append(g)
    if len(out) < len(tensors):  # extra gradients are left out, as torch's zip leaves them
        raise RuntimeError(f"got {len(tensors)} tensors and {len(out)} gradients")
    return out


def _shape_mismatch(i: int, first: Tensor, t: Tensor, batched: bool) -> str:
    """torch's message; batched, it names the first vector's shape less its first dim, as torch does."""
    if not batched:
        return f"Mismatch in shape: grad_output[{i}] has a shape of {first.shape} and output[{i}] has a shape of {t.shape}."
    return (
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch dimension. "
        "The sizes of the remaining dimensions are expected to match the shape of corresponding output, but a "
        f"mismatch was detected: grad_output[{i}] has a shape of {Size(first.shape[1:])} and output[{i}] has a shape of "
        f"{t.shape}. If you only want some tensors in `grad_output` to be considered batched, consider using vmap."
    )


def _tensor_or_tensors(grads, count: int) -> tuple:
    """The gradients given for `count` outputs: None for each, one Tensor, or a sequence (a number is
    refused by `tuple`, with Python's TypeError, as in torch)."""
    if grads is None:
        return (None,) * count
    if isinstance(grads, Tensor):
        return (grads,)
    return tuple(grads)


def _roots(tensors):
    roots = []
    for i, t in enumerate(tensors):
        if not t._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(edge_of(t))
    return roots


def _watched(tensors: tuple) -> None:
    for watch in list(call_watchers):
        watch(tensors)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """engine.autograd.backward: accumulate d(sum of tensors . grad_tensors)/d(leaf) into .grad."""
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    tensors = tuple(tensors)
    if call_watchers:
        _watched(tensors)
    grad_tensors = _tensor_or_tensors(grad_tensors, len(tensors))
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    roots = _roots(tensors)
    grads = _make_grads(tensors, grad_tensors)
    if inputs is not None:
        for t in inputs:  # as PyTorch: a non-leaf input gets its .grad through retain_grad
            t.retain_grad()
    if create_graph:  # x.grad's graph reaches x's AccumulateGrad, which holds x
        warn_once(CREATE_GRAPH_CYCLE_WARNING, stacklevel=2)
    run(roots, grads, retain_graph, create_graph, inputs=inputs, capture=False)


CREATE_GRAPH_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
    "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
    "to None after use to break the cycle and avoid the leak."
)


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
    """engine.autograd.grad: the gradients of outputs w.r.t. inputs, returned, not accumulated.

    `inputs` may be a dict (exactly), whose values are the inputs: the gradients come back under its keys.
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    if call_watchers:
        _watched(outputs)
    keys = tuple(inputs) if type(inputs) is dict else None
    if keys is not None:
        inputs = tuple(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `grad()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn(ONLY_INPUTS_WARNING, FutureWarning, stacklevel=2)
    grad_outputs = _tensor_or_tensors(grad_outputs, len(outputs))
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = _roots(outputs)
    grads = _make_grads(outputs, grad_outputs, is_grads_batched)
    if is_grads_batched:  # one backward per vector of the batch, at once through engine.func.vmap
        captured = VMAP[0](
            lambda gs, retain: run(roots, gs, retain, create_graph, inputs=inputs, capture=True),
            [None if g is None else _to_mode(g, True) for g in grads],
            retain_graph,
            create_graph,
        )
    else:
        captured = run(roots, grads, retain_graph, create_graph, inputs=inputs, capture=True)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:  # torch.zeros_like(input, requires_grad=create_graph)
                g = wrap(backend.xp_of(t._data).zeros_like(t._data))
                g._rg = bool(create_graph)
            result.append(g)
            continue
        result.append(g if isinstance(g, Tensor) else wrap(g))
    return tuple(result) if keys is None else dict(zip(keys, result))


ONLY_INPUTS_WARNING = (
    "only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate gradient for "
    "other parts of the graph, please use engine.autograd.backward."
)
