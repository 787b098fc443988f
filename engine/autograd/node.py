"""Graph nodes (`grad_fn`): edges to the next nodes, saved tensors, hooks, AccumulateGrad."""

from __future__ import annotations

import weakref
from itertools import count

from . import anomaly

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class SavedOutput:
    """An op's own output, saved for its backward without a reference back to the node.

    Saving the output Tensor would close a cycle (tensor -> grad_fn -> saved tensor) that
    only the cyclic GC frees. As PyTorch's SavedVariable does, keep the array and the
    version counter, and rebuild a Tensor whose grad_fn is the node when one is asked for.
    """

    __slots__ = ("_data", "_vc", "_output_nr")

    def __init__(self, tensor, output_nr: int = 0):
        self._data = tensor._data
        self._vc = tensor._vc
        self._output_nr = output_nr

    def tensor(self, node):
        """The output as a Tensor again: same array and version counter, `grad_fn` the node."""
        from ..tensor import wrap

        t = wrap(self._data)
        t._vc = self._vc
        t.grad_fn = node
        t._output_nr = self._output_nr
        t._rg = True
        return t


class RemovableHandle:
    """Returned by every register_*hook; `remove()` unregisters the hook."""

    _ids = count()
    __slots__ = ("_hooks", "id")

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks: dict, fn) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class NodeHooks:
    """The rarely used per-node hook tables, kept out of the node so nodes stay small."""

    __slots__ = ("pre", "post", "tensor", "retained")

    def __init__(self):
        self.pre: dict = {}
        self.post: dict = {}
        self.tensor: dict = {}  # output_nr -> {id: hook}
        self.retained: dict = {}  # output_nr -> weakref to the tensor that retains grad


class Node:
    """A backward function. Subclasses implement `apply(grads, m, create_graph)`.

    `grads` holds one gradient per output of the forward op (None when no gradient
    reached that output); `apply` returns one gradient per entry of `next_functions`.
    `m` is the math namespace the gradients live in: raw arrays, or Tensors when the
    backward itself is being recorded (`create_graph=True`).
    """

    __slots__ = ("next_functions", "_hooks", "_trace", "__weakref__")
    num_outputs = 1
    saved_names: tuple = ()
    runs_without_grads = False  # custom Functions still run (on zeros) when no gradient arrives

    def __init__(self, next_functions=()):
        self.next_functions = next_functions
        self._hooks = None
        self._trace = anomaly.creation_trace() if anomaly.state[0] else None

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def __call__(self, *grads):
        """Run this node's backward on Tensors directly, as torch's `grad_fn(...)` does."""
        from .backward import call_node

        return call_node(self, grads)

    def apply(self, grads, m, create_graph):
        raise NotImplementedError

    def release(self) -> None:
        """Free saved buffers once backward no longer needs them."""

    # hooks ----------------------------------------------------------------------------
    def _hook_table(self) -> NodeHooks:
        if self._hooks is None:
            self._hooks = NodeHooks()
        return self._hooks

    def register_hook(self, fn) -> RemovableHandle:
        """fn(grad_inputs, grad_outputs) -> None or replacement grad_inputs."""
        return add_hook(self._hook_table().post, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """fn(grad_outputs) -> None or replacement grad_outputs."""
        return add_hook(self._hook_table().pre, fn)

    def _add_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        """A hook registered through a tensor this node produced (runs before `pre`)."""
        return add_hook(self._hook_table().tensor.setdefault(output_nr, {}), fn)

    def _retain(self, tensor) -> None:
        self._hook_table().retained[tensor._output_nr] = weakref.ref(tensor)

    @property
    def metadata(self) -> dict:
        return {}


class AccumulateGrad(Node):
    """The sink for a leaf: adds the incoming gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable

    def name(self) -> str:
        return "engine::autograd::AccumulateGrad"

    def apply(self, grads, m, create_graph):
        from .backward import accumulate_into

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


def edge_of(tensor):
    """The (node, output_nr) pair a gradient for `tensor` flows into."""
    fn = tensor.grad_fn
    if fn is not None:
        return (fn, tensor._output_nr)
    # A leaf view of a base that requires grad was made in no_grad: no edge, as in torch.
    if tensor._rg and (tensor._base is None or not tensor._base._rg):
        return (accumulator_of(tensor), 0)
    return (None, 0)
