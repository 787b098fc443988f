"""Graph nodes (`grad_fn`): edges to the next nodes, hooks, and the errors about saved values."""

from __future__ import annotations

import weakref

from .. import backend
from ..ops import namespaces
from ..ops.namespaces import array_math
from ..tensor import Tensor, tp_name, wrap
from . import anomaly
from .hooks import RemovableHandle, add_hook
from .thread_local import this_thread

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MESSAGE = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def leaf_error(leaf, through_view: bool = False, message: str | None = None) -> RuntimeError:
    """PyTorch's error for an in-place change of a leaf that requires grad (or of a view of one);
    `message` where PyTorch words it otherwise (a custom Function's `mark_dirty`).

    The error carries the leaf (`.tensor`) and its kind (`.autograd_kind`) for gradcli anomaly.
    """
    err = RuntimeError(message or (VIEW_OF_LEAF_MESSAGE if through_view else LEAF_MESSAGE))
    err.tensor = leaf
    err.autograd_kind = "view-of-leaf-inplace" if through_view else "leaf-inplace"
    return err


def freed_error() -> RuntimeError:
    """PyTorch's error for saved values used after backward freed them (kind `freed`, for gradcli)."""
    err = RuntimeError(FREED_MESSAGE)
    err.autograd_kind = "freed"
    return err


def short_name(node) -> str:
    """How PyTorch 2.x names a node in its messages: `MulBackward0` -> `Mul`, `PowBackward1` -> `Pow1`."""
    name = node.name()
    if "::" in name:
        return name
    if name.endswith("Backward0"):
        return name[:-9]
    return name.replace("Backward", "", 1)


def version_error(tensor, expected: int, producer) -> RuntimeError:
    """PyTorch's message for a saved tensor modified in place, word for word (torch -> engine).

    `producer` is the (node, output_nr) that made the tensor, or None for a leaf.
    """
    where = f", which is output {producer[1]} of {short_name(producer[0])}," if producer else ""
    hint = (
        "Hint: the backtrace further above shows the operation that failed to compute its "
        "gradient. The variable in question was changed in there or anywhere later. Good luck!"
        if anomaly.is_anomaly_enabled()
        else "Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with engine.autograd.set_detect_anomaly(True, check_nan=False)."
    )
    sizes = "[" + ", ".join(str(n) for n in tensor.shape) + "]"
    err = RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{backend.tensor_type_name(tensor._data)} {sizes}]{where} is at version "
        f"{tensor._vc.version}; expected version {expected} instead. {hint}"
    )
    err.saved_tensor = tensor
    err.expected_version = expected
    return err


class NodeHooks:
    """The rarely used per-node tables (hooks, `metadata`), kept out of the node so nodes stay small."""

    __slots__ = ("pre", "post", "tensor", "retained", "metadata")

    def __init__(self):
        self.pre: dict = {}
        self.post: dict = {}
        self.tensor: dict = {}  # output_nr -> {id: hook}
        self.retained: dict = {}  # output_nr -> weakref to the tensor that retains grad
        self.metadata: dict = {}  # grad_fn.metadata: the user's, one dict for the node's life


def hook_name(hook) -> str:
    return str(hook.__name__) if hasattr(hook, "__name__") else "<unknown>"


def checked_hook_result(hook, original, result):
    """What a gradient hook returned in place of `original` (a Tensor, raw array or None), refused
    as PyTorch refuses it: not a Tensor, another type or device, another size."""
    if result is None:
        return None
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{tp_name(result)}'")
    array = original._data if isinstance(original, Tensor) else original
    was, got = backend.tensor_type_name(array), backend.tensor_type_name(result._data)
    if was != got:
        raise RuntimeError(f"hook '{hook_name(hook)}' has changed the type of value (was {was} got {got})")
    if result._data.shape != array.shape:
        raise RuntimeError(f"hook '{hook_name(hook)}' has changed the size of value")
    return result


def checked_hook_results(hook, originals: tuple, results) -> tuple:
    """A node hook's replacement gradients: a tuple of as many, each checked (None: no gradient)."""
    if not isinstance(results, tuple):
        raise TypeError(f"expected tuple, but hook returned '{tp_name(results)}'")
    if len(results) != len(originals):
        raise RuntimeError(
            f"hook '{hook_name(hook)}' has returned an incorrect number of values "
            f"(got {len(results)}, but expected {len(originals)})"
        )
    for original, result in zip(originals, results):
        checked_hook_result(hook, original, result)
    return results


def as_tensor_or_none(g):
    """A gradient as users see it: a Tensor (raw arrays wrapped), or None."""
    if g is None or isinstance(g, Tensor):
        return g
    return wrap(g)


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
    refuses_view = False  # the grad_fn of a view that may no longer be used (ops/inplace.py's Invalid)

    def __init__(self, next_functions=()):
        self.next_functions = next_functions
        self._hooks = None
        self._trace = anomaly.creation_trace() if anomaly.state[0] else None

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def __call__(self, *grads, **kwargs):
        """`grad_fn(*grads)`: this node's backward on Tensors, outside any graph run, as in torch.

        One gradient (or None) per output of the forward; with grad mode on the formulas are
        recorded, as PyTorch's ops inside a backward function are.
        """
        _check_call(self.num_outputs, grads, kwargs)
        if all(g is None for g in grads) and not self.runs_without_grads:
            outputs = [None] * len(self.next_functions)
        elif this_thread.grad_enabled:
            outputs = self.apply(list(grads), namespaces.TENSOR_MATH, True)
        else:
            sample = next((g for g in grads if g is not None), None)  # none: a custom Function's zeros
            m = array_math(sample._data) if sample is not None else None
            outputs = self.apply([None if g is None else g._data for g in grads], m, False)
        wrapped = tuple(as_tensor_or_none(g) for g in outputs)
        return wrapped if len(wrapped) != 1 else wrapped[0]

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
        """A dict for the user's notes about this node; the same dict every time."""
        return self._hook_table().metadata


def _check_call(expected: int, grads: tuple, kwargs: dict) -> None:
    """PyTorch's TypeErrors for a grad_fn called with the wrong arguments."""
    if kwargs:
        raise TypeError("keyword arguments are not supported")
    if len(grads) != expected:
        raise TypeError(f"expected {expected} arguments, got {len(grads)} instead")
    for i, g in enumerate(grads):
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"argument {i} is not a Variable")
