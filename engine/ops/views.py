"""Which views share a storage, and how each was made (PyTorch's view tracking).

A view shares its base's version counter (tensor.VersionCounter). Each view op records
the view there too (`views`: {id(view): weak reference, or (weak reference, creation meta)}),
so that an in-place change made through any of them can bring every other one up to date,
or refuse it where the view's creation forbids (made in no_grad mode, returned by a custom
Function).

`detach()` aliases share the counter as well, so, as in PyTorch (where this follows the
version), a change through one of them also refreshes the views. Only weak references
are kept; dead ones are swept out as the table grows and when it is walked.

`note_view` is called by every view op (`functions._view`), once the view has its
`_base`, `_vc` and `_view_fn`.
"""

from __future__ import annotations

import weakref

from ..autograd.thread_local import this_thread

_SWEEP_FROM = 32  # sweep dead entries when the table reaches 32, 64, 128, ... entries
_ref = weakref.ref


# How a view was made (torch's CreationMeta): what an in-place change through it, or through
# its base, must refuse. DEFAULT views are rebased like any tensor.
DEFAULT = "DEFAULT"
NO_GRAD_MODE = "NO_GRAD_MODE"
IN_CUSTOM_FUNCTION = "IN_CUSTOM_FUNCTION"  # returned by a custom Function (or an input returned as-is)
MULTI_OUTPUT_NODE = "MULTI_OUTPUT_NODE"  # one of several differentiable outputs of one node


def note_view(out, a) -> None:
    """Record the view `out` (just made from `a`) with its storage.

    A view made in no_grad mode is NO_GRAD_MODE; one made in grad mode inherits how `a` was
    made when `a` is itself a view (PyTorch propagates the view's creation meta). Table values
    are the weak reference for DEFAULT views, else a (weak reference, creation meta) tuple.
    """
    vc = out._vc
    views = vc.views
    if views is None:
        views = vc.views = {}
    n = len(views)
    if n >= _SWEEP_FROM and not n & (n - 1):
        sweep(views)
    meta = (
        NO_GRAD_MODE if not this_thread.grad_enabled else creation_meta(a) if a._base is not None else DEFAULT
    )
    ref = _ref(out)
    views[id(out)] = ref if meta == DEFAULT else (ref, meta)


def views_of(t) -> dict | None:
    """The view table of `t`'s storage, or None when no view of it was ever made."""
    return t._vc.views


def creation_meta(view) -> str:
    """How `view` was made: DEFAULT, NO_GRAD_MODE, IN_CUSTOM_FUNCTION or MULTI_OUTPUT_NODE."""
    views = view._vc.views
    entry = None if views is None else views.get(id(view))
    if entry is None:
        return DEFAULT
    alive, meta = _decode(entry)
    return meta if alive is view else DEFAULT


def set_creation_meta(view, meta: str) -> None:
    """Record how `view` was made (a custom Function marks the views it returns)."""
    views = view._vc.views
    if views is None:
        views = view._vc.views = {}
    ref = _ref(view)
    views[id(view)] = ref if meta == DEFAULT else (ref, meta)


def live_views(views: dict) -> list:
    """(view, creation meta) for each view still alive; dead entries are dropped."""
    out = []
    dead = []
    for key, entry in views.items():
        view, meta = _decode(entry)
        if view is None:
            dead.append(key)
        else:
            out.append((view, meta))
    for key in dead:
        del views[key]
    return out


def sweep(views: dict) -> None:
    for key in [key for key, entry in views.items() if _decode(entry)[0] is None]:
        del views[key]


def _decode(entry) -> tuple:
    """(the view or None if it died, its creation meta) from a table value."""
    if entry.__class__ is tuple:
        return entry[0](), entry[1]
    return entry(), DEFAULT
