"""Which views share a storage, and how each was made (PyTorch's view tracking).

A view shares its base's version counter (tensor.VersionCounter). Each view op records
the view there too (`views`: {id(view): weak reference}), so that an in-place change made
through any of them can bring every other one up to date.

`detach()` aliases share the counter as well, so, as in PyTorch (where this follows the
version), a change through one of them also refreshes the views. Only weak references
are kept; dead ones are swept out as the table grows and when it is walked.

`note_view` is called by every view op (`functions._view`), once the view has its
`_base`, `_vc` and `_view_fn`.
"""

from __future__ import annotations

import weakref

from ..autograd import grad_mode

_SWEEP_FROM = 32  # sweep dead entries when the table reaches 32, 64, 128, ... entries
_ref = weakref.ref
_grad_enabled = grad_mode.state  # [bool], read on every view


def note_view(out, a) -> None:
    """Record the view `out` (just made from `a`) with its storage.

    A view is "made in no_grad mode" when grad mode is off, or when it is a view of such a
    view (PyTorch propagates the view's creation meta). Table values are the weak reference,
    or for those views a (weak reference,) tuple.
    """
    vc = out._vc
    views = vc.views
    if views is None:
        views = vc.views = {}
    n = len(views)
    if n >= _SWEEP_FROM and not n & (n - 1):
        sweep(views)
    ref = _ref(out)
    if not _grad_enabled[0] or (a._base is not None and made_in_no_grad(a)):
        ref = (ref,)
    views[id(out)] = ref


def views_of(t) -> dict | None:
    """The view table of `t`'s storage, or None when no view of it was ever made."""
    return t._vc.views


def made_in_no_grad(view) -> bool:
    """Whether `view` (or the view it was made from) was made in no_grad mode."""
    views = view._vc.views
    if views is None:
        return False
    entry = views.get(id(view))
    if entry is None:
        return False
    alive, no_grad = _decode(entry)
    return no_grad and alive is view


def live_views(views: dict) -> list:
    """(view, made in no_grad) for each view still alive; dead entries are dropped."""
    out = []
    dead = []
    for key, entry in views.items():
        view, no_grad = _decode(entry)
        if view is None:
            dead.append(key)
        else:
            out.append((view, no_grad))
    for key in dead:
        del views[key]
    return out


def sweep(views: dict) -> None:
    for key in [key for key, entry in views.items() if _decode(entry)[0] is None]:
        del views[key]


def _decode(entry) -> tuple:
    """(the view or None if it died, whether it was made in no_grad mode) from a table value."""
    if entry.__class__ is tuple:
        return entry[0](), True
    return entry(), False
