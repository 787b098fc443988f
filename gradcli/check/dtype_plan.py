"""The dtype a case is checked in: float64 (the default), or the case's own (`--dtype native`).

float64: the inputs become float64 copies and every tensor the case reaches (reach.py: its
modules' parameters and buffers, the globals, closures, defaults and attributes its code reads)
gets float64 storage for the check, so float32 code is checked with float64's precision.

native: nothing is widened. The reached tensors get private copies in their own dtype (the check
still leaves no trace), the analytical gradient is computed in that dtype, and the numerical
Jacobian either in float64 (reference "float64", the default: the same function on float64
copies of the inputs and parameters (put where the parameters are held: module tables,
attributes, globals), everything else it reaches widened for each of its forwards, through
check_gradients' `Reference`) or in the native dtype too (reference "native"). eps and
tolerances not given come from the least precise dtype checked (tolerances.py).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..libraries import is_tensor
from .case_modules import float64_storage, is_module, module_tensors
from .reach import Reached, reached, replaced
from .tolerances import least_precise

if TYPE_CHECKING:
    from .loading import PreparedCase
    from .results import Settings


class DtypePlan:
    """How one case's dtypes are handled: `settings` (resolved), `storage` (entered around the
    check), `inputs(...)` and `arguments(...)` for check_gradients, and what the result reports."""

    def __init__(self, prepared: PreparedCase, settings: Settings, tensors_library: Any):
        case = prepared.case
        roots = {"model": case.model} if case.model is not None else {}
        roots.update({f"modules[{k}]": m for k, m in enumerate(case.modules)})
        self.reached: Reached = reached(case.func, roots)
        self.library = tensors_library
        self.native = settings.dtype == "native"
        inputs = {id(x) for x in prepared.inputs}
        params = [p for _, p in prepared.params]
        modules = [m for m in (case.model, *case.modules) if is_module(m)] + [
            m for _, m in self.reached.modules
        ]
        # a float64 tensor read is not copied (a dataset can be large): only what needs widening
        found = [t for _, t in self.reached.tensors if id(t) not in inputs and _lower(t)]
        self.tensors = params + module_tensors(modules) + found
        self.params = params
        checked = [x for x in (*prepared.inputs, *params) if _floating(x) and x.requires_grad]
        self.dtype = least_precise([tensors_library.dtype_name(x) for x in checked])
        self.settings = settings.resolved(self.dtype if self.native else "float64")
        self.reference = self.settings.reference
        self.storage = float64_storage(self.tensors, widen=not self.native)

    @property
    def upcast(self) -> bool:
        return self.storage.upcast

    @property
    def reference64(self) -> bool:
        """Whether the numerical side runs on float64 twins of a native check (see `arguments`)."""
        return self.native and self.reference == "float64" and self.dtype != "float64"

    def inputs(self, inputs: tuple) -> tuple:
        """The check's inputs, once `storage` is entered: float inputs as float64 copies when
        parameters were widened (check_gradients widens only inputs that require grad, and a
        float32 `x` would meet float64 weights); in native mode as they are."""
        if self.native or not self.storage.upcast:
            return inputs
        return tuple(self.library.float64_leaf(x) if _lower(x) else x for x in inputs)

    def arguments(self, func: Callable, inputs: tuple) -> dict[str, Any]:
        """check_gradients' keywords for the dtype: native checks keep their dtype (no upcast), and
        with a float64 reference their numerical side runs `func` on float64 twins."""
        if not self.native:
            return {}
        if not self.reference64:
            return {"upcast": False}
        from engine.autograd.gradcheck import Reference

        twins = tuple(self.library.float64_leaf(x) if _floating(x) else x for x in inputs)
        params = {id(p) for p in self.params}
        replacements = {id(x): t for x, t in zip(inputs, twins) if id(x) in params}
        others = [t for t in self.tensors if id(t) not in params]
        found = self.reached

        @contextlib.contextmanager
        def in_float64() -> Iterator[None]:
            with float64_storage(others), replaced(found, replacements):
                yield

        return {"upcast": False, "reference": Reference(func, twins, in_float64)}

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """A native check means to run below double precision: without torch's warning that it will fail."""
        with warnings.catch_warnings():
            if self.native:
                warnings.filterwarnings("ignore", message=r"Input #\d+ requires gradient and is not a double")
            yield


def _floating(x: Any) -> bool:
    return (is_tensor(x)) and x.dtype.is_floating_point


def _lower(x: Any) -> bool:
    return _floating(x) and x.dtype.itemsize < 8
