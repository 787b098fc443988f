"""Custom autograd Functions: user-written forward/backward, with PyTorch's ctx API.

As in PyTorch, the ctx passed to forward *is* the graph node (`<Name>Backward`), so
what forward stores on it is there when backward runs. How the outputs join the graph
follows torch's `_wrap_outputs` (torch/csrc/autograd/custom_function.cpp): an input returned
as-is comes back as a view of it, a dirty (mark_dirty) input is rebased on the node (through
CopySlices when it is a view), the views a Function returns refuse in-place changes, and
non-differentiable outputs are detached.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from .. import backend
from ..ops.creation import zeros_like
from ..ops.inplace import mark_returned_view, rebase_history
from ..ops.tangents import tangent_of
from ..tensor import SavedOutput, Tensor, raw_grad_fn, tp_name, wrap
from . import forward_grad, grad_mode, saved_hooks
from .backward import edge_of
from .node import Node, freed_error, leaf_error, version_error
from .saved_hooks import PackedSaved
from .thread_local import this_thread

ONCE_DIFFERENTIABLE_MESSAGE = (
    "trying to differentiate twice a function that was marked with @once_differentiable"
)
LEGACY_CALL_MESSAGE = (
    "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
    "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html#torch."
    "autograd.Function)"
)
DIRTY_LEAF_MESSAGE = "a leaf Variable that requires grad has been used in an in-place operation."
DIRTY_NOT_INPUT_WARNING = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been mutated "
    "should be passed to ctx.mark_dirty()."
)
DIRTY_VIEW_OF_SEVERAL_OUTPUTS = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
    "return more than one Tensor. This is not supported by the current autograd engine. You should either "
    "make sure the input is not a view (using .clone() for example) or make your Function only return one "
    "Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single Tensor "
    "and a second one that does the other operations). You can ask on the forum https://discuss.pytorch.org/ "
    "if you need help to do this change."
)
DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. The inputs that "
    "are modified inplace must all be outputs of the Function."
)


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
    # False: a non-differentiable output that no gradient reached gets None, not zeros.
    _materialize_non_diff_grads = True
    runs_without_grads = True

    @property
    def saved_tensors(self) -> tuple:
        for_forward = self.__dict__.get("_jvp_saved")
        if for_forward is not None:  # inside jvp: what forward passed to save_for_forward, as in torch
            return for_forward
        saved = self.__dict__.get("_saved_entries", ())
        if saved is None:
            raise freed_error()
        out = []
        for t, version in saved:
            if t.__class__ is PackedSaved:  # through its unpack_hook, unchecked, as torch's
                out.append(t.unpack(self))
                continue
            if t.__class__ is SavedOutput:
                t = t.tensor(self)
            if t is not None and t._vc.version != version:
                raise version_error(t, version, None if t.grad_fn is None else (t.grad_fn, t._output_nr))
            out.append(t)
        return tuple(out)

    def saved_pairs(self) -> list | None:
        """(tensor, version) per saved entry (outputs rebuilt, unchecked); None once freed."""
        saved = self.__dict__.get("_saved_entries", ())
        if saved is None:
            return None
        return [(saved_hooks.as_user_sees(self, t), v) for t, v in saved]

    def release(self) -> None:
        if self.__dict__.get("_saved_entries"):
            self._saved_entries = None

    def _user_backward(self):
        """The Function's backward, or its vjp (the same thing under another name), never both."""
        forward_cls = self._forward_cls
        backward, vjp = forward_cls.backward, forward_cls.vjp
        if backward is not Function.backward and vjp is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should only "
                "implement one of them."
            )
        return vjp if vjp is not Function.vjp else backward

    def apply(self, grads, m, create_graph):
        result = self._user_backward()(self, *self._backward_inputs(grads))
        if not isinstance(result, tuple):
            result = (result,)
        result = self._check_count(result)
        outputs = []
        for position, (arg_index, (shape, dtype)) in enumerate(zip(self._tensor_positions, self._input_meta)):
            g = result[arg_index]
            if g is None or self.next_functions[position][0] is None:
                outputs.append(None)
                continue
            g = self._checked_gradient(g, position, arg_index, shape, dtype)
            outputs.append(g if create_graph else g._data)
        for arg_index, r in enumerate(result):
            if r is not None and arg_index not in self._tensor_positions:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position "
                    f"{arg_index + 1}, but the corresponding forward input was not a Variable"
                )
        return outputs

    def _backward_inputs(self, grads) -> list:
        """One gradient per forward output, as torch hands them to backward: None for a
        non-Tensor output, and zeros where none arrived unless materializing is turned off."""
        tensors = []
        for nr, (g, (shape, dtype, device)) in enumerate(zip(grads, self._output_meta)):
            if g is not None:
                tensors.append(g if isinstance(g, Tensor) else wrap(g))
            elif dtype is None or not self._materializes(nr):
                tensors.append(None)
            else:
                tensors.append(_zeros(shape, dtype, device))
        return tensors

    def _materializes(self, output_nr: int) -> bool:
        if output_nr in self._non_differentiable_outputs:
            return self.materialize_grads and self._materialize_non_diff_grads
        return self.materialize_grads

    def _check_count(self, result: tuple) -> tuple:
        """One gradient per forward argument; extra trailing Nones are allowed, as in torch."""
        if len(result) == self._num_args:
            return result
        if len(result) > self._num_args and all(r is None for r in result[self._num_args :]):
            return result[: self._num_args]
        raise RuntimeError(
            f"function {self.name()} returned an incorrect number of gradients "
            f"(expected {self._num_args}, got {len(result)})"
        )

    def _checked_gradient(self, g, position: int, arg_index: int, shape, dtype) -> Tensor:
        """A returned gradient made to fit its input: a Tensor, summed to the input's shape, its dtype."""
        name = self.name()
        if not isinstance(g, Tensor):
            raise RuntimeError(f"expected Variable or None (got {tp_name(g)})")
        if g.shape != shape:
            if not _expandable(shape, g.shape):
                raise RuntimeError(
                    f"Function {name} returned an invalid gradient at index {position} - got "
                    f"[{', '.join(map(str, g.shape))}] but expected shape compatible with "
                    f"[{', '.join(map(str, shape))}]"
                )
            g = g.sum_to_size(shape)
        if g.dtype is not dtype:
            g = g.to(dtype)
        return g


def _expandable(target, shape) -> bool:
    """Whether `target` broadcasts to `shape` (so a gradient of `shape` sums back to it)."""
    if len(target) > len(shape):
        return False
    for t, s in zip(reversed(target), reversed(shape)):
        if t != s and t != 1:
            return False
    return True


# ------------------------------------------------------------------------- Function


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call `.apply`."""

    #: Whether engine.func.vmap may batch the Function by batching its forward and backward op by
    #: op (torch's generated vmap rule); else it needs a `vmap` staticmethod.
    generate_vmap_rule = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,), {"_forward_cls": cls})

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so "
            "you should invoke them on the class itself. Instantiating an autograd function will raise an "
            "error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(LEGACY_CALL_MESSAGE)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Override (with a forward without ctx) to set up ctx apart from forward (PyTorch 2 style)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    @staticmethod
    def vmap(info, in_dims, *args):
        """Override to batch the Function under engine.func.vmap yourself (torch 2.x's form)."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod or set "
            "generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        uses_setup_context = cls.setup_context is not Function.setup_context
        transforms = this_thread.transforms
        if transforms.functorch:  # inside an engine.func transform
            _check_functorch_support(cls, uses_setup_context)
            if transforms.vmap_functorch:
                _check_vmap_support(cls)
        if uses_setup_context:
            args, kwargs = _bind_defaults(cls.forward, args, kwargs)
        ctx = _new_ctx(cls, args)
        tangents = _input_tangents(args) if forward_grad.state[0] else None
        with grad_mode.no_grad(), forward_grad.suspended():
            if uses_setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        result = _wrap_outputs(ctx, args, outputs)
        if tangents is not None:
            _output_tangents(cls, ctx, tangents, result)
        return result


def _check_functorch_support(cls, uses_setup_context: bool) -> None:
    """torch.func's transforms run a Function only in its torch 2.x form (a separate setup_context)."""
    if not uses_setup_context:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), "
            "it must override the setup_context staticmethod. For more details, please see "
            f"{EXTENDING_FUNC_DOCS}"
        )


def _check_vmap_support(cls) -> None:
    """torch's rules for a Function under vmap, batched inputs or not: generate_vmap_rule=True or a vmap
    staticmethod, not both. Either way the engine batches the forward and backward op by op, which gives
    what a correct vmap staticmethod gives (that staticmethod itself is not called)."""
    own_rule = cls.vmap is not Function.vmap
    if cls.generate_vmap_rule and own_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an overridden "
            "vmap staticmethod. Please set generate_vmap_rule=False or delete the overridden vmap staticmethod "
            f"to avoid ambiguity. For more details, please see {EXTENDING_FUNC_DOCS}"
        )
    if not (cls.generate_vmap_rule or own_rule):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override and "
            f"implement the vmap staticmethod or set generate_vmap_rule=True. For more details, please see "
            f"{EXTENDING_FUNC_DOCS}"
        )


EXTENDING_FUNC_DOCS = "https://pytorch.org/docs/main/notes/extending.func.html"


@contextmanager
def functorch_rules(vmap: bool = False, on: bool = True) -> Iterator[None]:
    """Count a torch.func transform (a vmap if `vmap`) as running in this thread; `on=False`: none, while
    it runs. Inside one, torch.func's rules for custom Functions apply. The older vmap that
    is_grads_batched, gradcheck's batched checks and autograd.functional's vectorize use (torch's too)
    has none, nor has autograd.functional's forward AD."""
    transforms = this_thread.transforms
    saved = transforms.functorch, transforms.vmap_functorch
    if on:
        transforms.functorch, transforms.vmap_functorch = saved[0] + 1, saved[1] + vmap
    else:
        transforms.functorch = transforms.vmap_functorch = 0
    try:
        yield
    finally:
        transforms.functorch, transforms.vmap_functorch = saved


def _input_tangents(args: tuple) -> list | None:
    """jvp's grad_inputs under forward AD: each tensor's tangent (zeros where it has none), None for the
    rest; None when no input has a tangent."""
    found = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in found):
        return None
    return [t if t is not None or not isinstance(a, Tensor) else zeros_like(a) for a, t in zip(args, found)]


def _output_tangents(cls, ctx, tangents: list, result) -> None:
    """The outputs' tangents from the Function's jvp, with what forward saved with save_for_forward."""
    ctx.__dict__["_jvp_saved"] = tuple(ctx.__dict__.pop("saved_for_forward", ()))
    try:
        with forward_grad.suspended():
            found = cls.jvp(ctx, *tangents)
    finally:
        del ctx.__dict__["_jvp_saved"]
    outs = result if isinstance(result, tuple) else (result,)
    found = found if isinstance(found, tuple) else (found,)
    for out, t in zip(outs, found):
        if isinstance(out, Tensor) and t is not None and out.dtype.is_floating_point:
            forward_grad.set_tangent(out, t)


class InplaceFunction(Function):
    """Kept for backward compatibility, as in torch: use Function."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


def _bind_defaults(forward, args: tuple, kwargs: dict) -> tuple:
    """forward's arguments with its defaults filled in, so setup_context sees every input."""
    bound = inspect.signature(forward).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args, bound.kwargs


def _new_ctx(cls, args: tuple) -> BackwardCFunction:
    """The node for one call, its edges taken before forward runs (as torch collects them)."""
    ctx = cls._backward_cls.__new__(cls._backward_cls)
    Node.__init__(ctx, ())
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
    ctx._executable = this_thread.grad_enabled and any(ctx.needs_input_grad)
    if ctx._executable:
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx.next_functions = tuple(edge_of(args[i]) for i in positions)
        ctx._tensor_positions = positions
        ctx._num_args = len(args)
        ctx._input_meta = tuple((args[i].shape, args[i].dtype) for i in positions)
    return ctx


# ------------------------------------------------------------------- joining the graph


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, outputs):
    """forward's outputs joined to the graph through ctx, as torch's _wrap_outputs does."""
    is_tuple = isinstance(outputs, tuple)
    returned = outputs if is_tuple else (outputs,)
    outs = list(returned)
    # What forward marked is read once and dropped: kept on ctx, a dirty view would close a
    # cycle (view -> AsStrided -> CopySlices -> ctx -> view).
    dirty = _marked_dirty(ctx)
    non_diff = _marked(
        ctx, "non_differentiable", "mark_non_differentiable only accepts variable arguments, but got "
    )
    executable = ctx.__dict__.pop("_executable")
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    differentiable = []
    for nr, out in enumerate(outs):
        if not isinstance(out, Tensor):
            continue
        is_input = id(out) in input_ids
        is_dirty = _holds(dirty, out)
        if executable and not _holds(non_diff, out) and out.dtype.is_floating_point:
            out = _differentiable_output(ctx, out, nr, is_input, is_dirty, len(outs))
            differentiable.append(nr)
        else:
            out = _non_differentiable_output(out, is_input, is_dirty)
        outs[nr] = out
        if out._base is not None and not (is_input and is_dirty):
            mark_returned_view(out, False)
    if len(differentiable) > 1:
        for out in outs:
            if isinstance(out, Tensor) and out._base is not None:
                mark_returned_view(out, True)
    if any(not _holds(returned, t) for t in dirty):
        raise RuntimeError(DIRTY_NOT_RETURNED)
    if executable:
        _record_outputs(ctx, outs, differentiable)
        _save_for_backward(ctx, outs, dirty)
    else:
        ctx.__dict__.pop("to_save", None)
        ctx._saved_entries = None
    return tuple(outs) if is_tuple else outs[0]


def _marked(ctx, attribute: str, refusal: str) -> tuple:
    """The tensors forward passed to ctx.mark_dirty / mark_non_differentiable, taken off ctx.

    A non-Tensor among them is refused with torch's message (cut short as torch 2.13 prints it).
    """
    tensors = ctx.__dict__.pop(attribute, ())
    if any(not isinstance(t, Tensor) for t in tensors):
        raise RuntimeError(refusal)
    return tensors


def _marked_dirty(ctx) -> tuple:
    """The dirty tensors, each at a new version (torch bumps them here, whatever forward did)."""
    dirty = _marked(ctx, "dirty_tensors", "mark_dirty can only accept variables, but argument ")
    for t in dirty:
        t._vc.version += 1
    return dirty


def _holds(tensors, t) -> bool:
    """Whether `t` itself is among `tensors` (`in` would compare Tensors elementwise)."""
    return any(x is t for x in tensors)


def _differentiable_output(ctx, out: Tensor, nr: int, is_input: bool, is_dirty: bool, num_outputs: int):
    """An output the node's gradient flows through: a dirty input rebased on the node, an input
    returned as-is turned into a view of it, anything else given the node as grad_fn."""
    if is_dirty:
        if out._rg and raw_grad_fn(out) is None:  # (a refused view's own error comes in the rebase)
            raise leaf_error(out, message=DIRTY_LEAF_MESSAGE)
        if not is_input:
            warnings.warn(DIRTY_NOT_INPUT_WARNING, UserWarning, stacklevel=4)
        if out._base is not None and num_outputs > 1:
            raise RuntimeError(DIRTY_VIEW_OF_SEVERAL_OUTPUTS)
        out._grad = None
        rebase_history(out, ctx, nr)
        return out
    if is_input:
        out = _alias(out)
    out._node = ctx
    out._output_nr = nr
    out._rg = True
    return out


def _non_differentiable_output(out: Tensor, is_input: bool, is_dirty: bool) -> Tensor:
    """An output outside the graph: an input returned as-is comes back as a view (or a detached
    alias when it requires grad); a result that requires grad is detached, unless it is a view."""
    if not out._rg:
        return _alias(out) if is_input and not is_dirty else out
    if is_input:
        return out.detach()
    if out._base is None:
        out.detach_()
    return out


def _alias(t: Tensor) -> Tensor:
    """A view of the whole of `t`, made in no_grad mode (torch's _view_as_self_with_no_grad)."""
    with grad_mode.no_grad():
        return t.view_as(t)


def _record_outputs(ctx, outs: list, differentiable: list) -> None:
    """What backward needs about the outputs: how many, their metadata, which carry no gradient."""
    ctx.num_outputs = len(outs)
    ctx._output_meta = tuple(
        (o.shape, o.dtype, o.device) if isinstance(o, Tensor) else ((), None, None) for o in outs
    )
    ctx._non_differentiable_outputs = frozenset(
        nr for nr, o in enumerate(outs) if isinstance(o, Tensor) and nr not in differentiable
    )


def _save_for_backward(ctx, outs: list, dirty: tuple) -> None:
    """The tensors forward saved, each with its version now.

    An output of the node (a dirty input too, even one rebased through a view) is saved as
    data + version counter, as torch's SavedVariable saves outputs: the Tensor itself would be
    a cycle through the node.
    """
    output_nrs = {}
    for nr, o in enumerate(outs):
        if isinstance(o, Tensor) and (o.grad_fn is ctx or _holds(dirty, o)):
            output_nrs[id(o)] = nr
    entries = []
    for i, t in enumerate(ctx.__dict__.pop("to_save", ())):
        if not isinstance(t, Tensor) and t is not None:
            raise TypeError(
                f"save_for_backward can only save variables, but argument {i} is of type {type(t).__name__}"
            )
        if t is None:
            entries.append((None, 0))
        elif this_thread.saved_hooks:
            entries.append((saved_hooks.pack(t, output_nrs.get(id(t))), t._vc.version))
        elif id(t) in output_nrs:
            entries.append((SavedOutput(t, output_nrs[id(t)]), t._vc.version))
        else:
            entries.append((t, t._vc.version))
    ctx._saved_entries = tuple(entries)


def _zeros(shape, dtype, device):
    """The zero gradient of an output no gradient reached (materialize_grads)."""
    return wrap(backend.xp_for(device).zeros(shape, dtype=dtype.np))


# ----------------------------------------------------------------- once_differentiable


class Error(Node):
    """A node whose backward is an error (torch's `DelayedError` makes it): the graph of a
    backward marked @once_differentiable, which must not be differentiated again."""

    __slots__ = ("message", "num_outputs")

    def name(self) -> str:
        return "engine::autograd::Error"

    def apply(self, grads, m, create_graph):
        raise RuntimeError(self.message)


def _delayed_error(message: str, tensors: tuple):
    """Aliases of `tensors` (None stays None) whose grad_fn is an Error node raising `message`.

    Each alias hangs, through the Error node, off a fresh leaf that requires grad, so the
    aliases require grad while their own values keep no history.
    """
    node = Error(tuple(_fresh_leaf_edge(t) for t in tensors))
    node.message = message
    node.num_outputs = len(tensors)
    outputs = []
    for nr, t in enumerate(tensors):
        if t is None:
            outputs.append(None)
            continue
        alias = wrap(t._data)  # torch's tensor_data(): the storage, its own version counter
        alias._node = node
        alias._output_nr = nr
        alias._rg = True
        outputs.append(alias)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _fresh_leaf_edge(t):
    if t is None:
        return (None, 0)
    leaf = t.detach()
    leaf._rg = True
    return edge_of(leaf)


def once_differentiable(fn):
    """Decorate a Function's backward that is not itself differentiable: it runs under no_grad,
    and when a double backward would go through it, its results raise instead."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not this_thread.grad_enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a._rg for a in args):
            return outputs
        return _delayed_error(
            ONCE_DIFFERENTIABLE_MESSAGE, outputs if isinstance(outputs, tuple) else (outputs,)
        )

    return wrapper
