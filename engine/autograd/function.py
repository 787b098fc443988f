"""Custom autograd Functions: user-written forward/backward, with PyTorch's ctx API.

As in PyTorch, the ctx passed to forward *is* the graph node (`<Name>Backward`), so
what forward stores on it is there when backward runs.
"""

from __future__ import annotations

from . import grad_mode
from .node import FREED_MESSAGE, Node, SavedOutput, edge_of

LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."


class FunctionCtx:
    """The ctx methods available inside forward."""

    def save_for_backward(self, *tensors) -> None:
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one call to a custom Function (and its ctx)."""

    _forward_cls = None
    materialize_grads = True
    runs_without_grads = True

    @property
    def saved_tensors(self) -> tuple:
        saved = self.__dict__.get("_saved_entries", ())
        if saved is None:
            err = RuntimeError(FREED_MESSAGE)
            err.autograd_kind = "freed"  # for gradcli anomaly: what the error is, without its words
            raise err
        from ..ops.op import version_error

        out = []
        for t, version in saved:
            if t.__class__ is SavedOutput:
                t = t.tensor(self)
            if t is not None and t._vc[0] != version:
                raise version_error(t, version, None if t.grad_fn is None else (t.grad_fn, t._output_nr))
            out.append(t)
        return tuple(out)

    def saved_pairs(self) -> list | None:
        """(tensor, version) per saved entry (outputs rebuilt, unchecked); None once freed."""
        saved = self.__dict__.get("_saved_entries", ())
        if saved is None:
            return None
        return [(t.tensor(self) if t.__class__ is SavedOutput else t, v) for t, v in saved]

    def release(self) -> None:
        if self.__dict__.get("_saved_entries"):
            self._saved_entries = None

    def apply(self, grads, m, create_graph):
        from ..ops.creation import zeros
        from ..tensor import Tensor, wrap

        tensors = []
        for g, (shape, dtype, device) in zip(grads, self._output_meta):
            if g is None:
                tensors.append(zeros(shape, dtype=dtype, device=device) if self.materialize_grads else None)
            else:
                tensors.append(g if isinstance(g, Tensor) else wrap(g))
        result = self._forward_cls.backward(self, *tensors)
        if not isinstance(result, tuple):
            result = (result,)
        name = self.name()
        if len(result) != self._num_args:
            if len(result) > self._num_args and all(r is None for r in result[self._num_args :]):
                result = result[: self._num_args]
            else:
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients "
                    f"(expected {self._num_args}, got {len(result)})"
                )
        outputs = []
        for position, (arg_index, (shape, dtype)) in enumerate(zip(self._tensor_positions, self._input_meta)):
            g = result[arg_index]
            if g is None or self.next_functions[position][0] is None:
                outputs.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(
                    f"{name}.backward returned {type(g).__name__} at position {arg_index}; "
                    "expected a Tensor or None"
                )
            if g.shape != shape:
                if _expandable(shape, g.shape):
                    g = g.sum_to_size(shape)
                else:
                    raise RuntimeError(
                        f"Function {name} returned an invalid gradient at index {position} - got "
                        f"[{', '.join(map(str, g.shape))}] but expected shape compatible with "
                        f"[{', '.join(map(str, shape))}]"
                    )
            if g.dtype is not dtype:
                g = g.to(dtype)
            outputs.append(g if create_graph else g._data)
        for arg_index, r in enumerate(result):
            if r is not None and arg_index not in self._tensor_positions:
                raise RuntimeError(
                    f"function {name} returned a gradient different than None at position "
                    f"{arg_index + 1}, but the corresponding forward input was not a Variable"
                )
        return outputs


def _expandable(target, shape) -> bool:
    """Whether `target` broadcasts to `shape` (so a gradient of `shape` sums back to it)."""
    if len(target) > len(shape):
        return False
    for t, s in zip(reversed(target), reversed(shape)):
        if t != s and t != 1:
            return False
    return True


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call `.apply`."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,), {"_forward_cls": cls})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        from ..tensor import Tensor

        ctx = cls._backward_cls.__new__(cls._backward_cls)
        Node.__init__(ctx, ())
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        uses_setup = cls.setup_context is not Function.setup_context
        with grad_mode.no_grad():
            if uses_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        is_tuple = isinstance(outputs, tuple)
        outs = list(outputs) if is_tuple else [outputs]
        dirty = ctx.__dict__.get("dirty_tensors", ())
        for t in dirty:
            t._vc[0] += 1
        if not (grad_mode.state[0] and any(ctx.needs_input_grad)):
            ctx._saved_entries = None
            return outputs
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx.next_functions = tuple(edge_of(args[i]) for i in positions)
        ctx._tensor_positions = positions
        ctx._num_args = len(args)
        ctx._input_meta = tuple((args[i].shape, args[i].dtype) for i in positions)
        non_diff = ctx.__dict__.get("non_differentiable", ())
        inputs_by_id = {id(args[i]) for i in positions}
        for nr, out in enumerate(outs):
            if not isinstance(out, Tensor):
                continue
            if any(out is t for t in dirty):
                if out._rg and out.grad_fn is None:
                    err = RuntimeError(LEAF_MESSAGE)
                    err.autograd_kind = "leaf-inplace"  # for gradcli anomaly
                    raise err
            elif id(out) in inputs_by_id:
                out = outs[nr] = _alias(out)
            if any(out is t for t in non_diff):
                out._rg = False
                continue
            out.grad_fn = ctx
            out._output_nr = nr
            out._rg = True
        ctx.num_outputs = len(outs)
        ctx._output_meta = tuple(
            (o.shape, o.dtype, o.device) if isinstance(o, Tensor) else ((), None, None) for o in outs
        )
        to_save = ctx.__dict__.pop("to_save", ())
        # An output is saved as data + version counter: the Tensor itself would be a cycle.
        ctx._saved_entries = tuple(
            (
                SavedOutput(t, t._output_nr) if t is not None and t.grad_fn is ctx else t,
                t._vc[0] if t is not None else 0,
            )
            for t in to_save
        )
        return tuple(outs) if is_tuple else outs[0]

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Override to split context setup out of forward (PyTorch 2 style)."""


def _alias(t):
    from ..tensor import _view_tensor

    out = _view_tensor(t._data, t)
    return out
