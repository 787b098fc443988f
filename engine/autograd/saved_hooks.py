"""Saved-tensor hooks: what `graph.saved_tensors_hooks` registers, applied where nodes save tensors.

While a (pack_hook, unpack_hook) pair is registered, every tensor a node saves (a row's saved
inputs and output, a custom Function's save_for_backward) is replaced at save time by
`PackedSaved`: what pack_hook returned, and where the tensor sat in the graph. Reading it back
(the backward, `_saved_*`, `saved_tensors`) calls unpack_hook and rebuilds a tensor with that
place, as torch's SavedVariable does. As in torch, a packed tensor's version is not checked (the
hooks may have copied it anywhere), and the hooks are those of the innermost registration. Each thread has its own registrations, as in torch
(`this_thread.saved_hooks`); empty (the usual case), they cost the op path one truth test per node
that saves something.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..tensor import SavedOutput, Tensor, tp_name, wrap
from . import forward_grad
from .backward import accumulator_of
from .thread_local import this_thread

PACK_MODIFIED = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
    "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please open an "
    "issue if you need to perform in-place operations on the input to a pack hook."
)


class _NoVersion:
    """The version counter of a packed value: -1 never equals a saved version, so the fast path of
    `FormulaNode.apply` hands a packed value to `unpack` with no check of its own."""

    __slots__ = ()
    version = -1


class PackedSaved:
    """A saved tensor as pack_hook returned it, with the graph place its unpacked tensor gets:
    `node` for a node's own output (`output_nr`), else the tensor's grad_fn, or for a leaf its
    AccumulateGrad (held, so gradients reach the leaf under create_graph)."""

    __slots__ = (
        "packed", "unpack_hook", "grad_fn", "output_nr", "is_output", "requires_grad", "accumulator", "_tangent",
    )  # fmt: skip
    _vc = _NoVersion()

    def keep_tangent(self, output, tangent, level: int) -> None:
        """Keep the saving node's output's forward-AD tangent (forward_grad.py), when this is it."""
        if self.is_output and output._output_nr == self.output_nr:
            self._tangent = (level, tangent)

    def unpack(self, node) -> Tensor:
        """unpack_hook's tensor, in the saved tensor's place in the graph (`node`: the saver)."""
        result = self.unpack_hook(self.packed)
        if not isinstance(result, Tensor):
            raise TypeError(
                f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type {tp_name(result)}"
            )
        t = wrap(result._data)
        t._vc = result._vc
        fn = node if self.is_output else self.grad_fn
        if fn is not None:
            t._node, t._output_nr, t._rg = fn, self.output_nr, True
        else:
            t._rg = self.requires_grad
            if self.accumulator is not None:
                t._acc = weakref.ref(self.accumulator)
        tangent = forward_grad.kept_tangent(getattr(self, "_tangent", None))
        if tangent is not None:  # forward over reverse: the saved tensor's tangent, as torch's fw_grad
            forward_grad.set_tangent(t, tangent)
        return t


def as_user_sees(node, value):
    """A saved entry as `_saved_*` / `saved_tensors` show it: an output rebuilt, a packed tensor unpacked."""
    if value.__class__ is SavedOutput:
        return value.tensor(node)
    if value.__class__ is PackedSaved:
        return value.unpack(node)
    return value


def pack(tensor: Tensor, output_nr: int | None = None, hooks: tuple | None = None) -> PackedSaved:
    """`tensor` through the innermost pack_hook (or `hooks`' own), under no_grad; `output_nr` for the
    saving node's own output. pack_hook must not change the tensor in place (torch's error)."""
    pack_hook, unpack_hook = this_thread.saved_hooks[-1] if hooks is None else hooks
    version = tensor._vc.version
    previous = this_thread.grad_enabled
    this_thread.grad_enabled = False
    try:
        packed = pack_hook(tensor)
    finally:
        this_thread.grad_enabled = previous
    if tensor._vc.version != version:
        raise RuntimeError(PACK_MODIFIED)
    saved = PackedSaved.__new__(PackedSaved)
    saved.packed, saved.unpack_hook = packed, unpack_hook
    saved.is_output = output_nr is not None
    saved.grad_fn = None if saved.is_output else tensor.grad_fn
    saved.output_nr = output_nr if saved.is_output else tensor._output_nr
    saved.requires_grad = tensor._rg
    leaf = not saved.is_output and saved.grad_fn is None and tensor._rg
    saved.accumulator = accumulator_of(tensor) if leaf else None
    tangent = forward_grad.tangent_of(tensor) if forward_grad.level[0] >= 0 else None
    if tangent is not None:
        saved._tangent = (forward_grad.opened[0], tangent)
    return saved


class SavedTensor:
    """One of a node's saved tensors, as `_raw_saved_<name>` gives it: hooks of its own with
    `register_hooks` (torch's SavedTensor), packing it now, the entry then read through them."""

    def __init__(self, node, index: int) -> None:
        self._node = node
        self._index = index

    def register_hooks(
        self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]
    ) -> None:
        node, index = self._node, self._index
        if node._saved is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of "
                "the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
                "you need to backward through the graph a second time or if you need to access saved variables "
                "after calling backward."
            )
        value = node._saved[index]
        if value.__class__ is PackedSaved:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair "
                "of hooks is allowed at a time."
            )
        if not isinstance(value, (Tensor, SavedOutput)):
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        if value.__class__ is SavedOutput:
            packed = pack(value.tensor(node), value._output_nr, (pack_hook, unpack_hook))
        else:
            packed = pack(value, None, (pack_hook, unpack_hook))
        saved = list(node._saved)
        saved[index] = packed
        node._saved = saved


def push(pack_hook, unpack_hook) -> None:
    """Register a pair (torch's _push_saved_tensors_default_hooks), unless hooks are disabled."""
    if this_thread.hooks_disabled is not None:
        raise RuntimeError(this_thread.hooks_disabled)
    this_thread.saved_hooks.append((pack_hook, unpack_hook))


def disable(message: str) -> None:
    """Refuse registrations with `message`, and refuse at once if a pair is registered (torch's)."""
    this_thread.hooks_disabled = message
    if this_thread.saved_hooks:
        raise RuntimeError(message)


@contextmanager
def held_back() -> Iterator[None]:
    """Nothing packed inside: for a caller that packs a node itself once its saved values are final
    (an in-place op saves the changed tensor, known only after the row ran)."""
    registered = this_thread.saved_hooks
    held = registered[:]
    registered.clear()
    try:
        yield
    finally:
        registered[:] = held
