"""The observer gradcli installs in engine's anomaly mode, and installing it.

The engine tells the `Instrument` about every op (recorded or not), backward run, node backward, freed
graph, gradient accumulation and non-leaf `.grad` read. It keeps only what a finding will need
(raw frames, weak references, small counters); `error_kinds` and `warning_kinds` turn that
into findings. It raises itself only to stop the script at an anomaly the engine would carry
on through (an Inf in backward, NaN/Inf in forward).
"""

from __future__ import annotations

import contextlib
import sys
import warnings
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from engine.autograd import anomaly
from engine.autograd.anomaly import Observer
from engine.tensor import Tensor

from ..program.modules import ModuleCall, current_module
from ..program.sites import Sites, node_site
from . import nonfinite
from .nonfinite import walk
from .stats import all_finite, array_of, finite_fast, has, host_array, is_float_array, shape_of

#: Freed-node records kept (id(node) -> backward run); cleared past this, losing only line info.
MAX_FREED = 1 << 16
#: The engine's errors kept as they are raised (each becomes a finding unless the same one is found).
MAX_RAISED = 16


class LeafUse:
    """A leaf that requires grad, where a forward op first used it, and whether a gradient reached it."""

    __slots__ = ("ref", "shape", "site", "received")

    def __init__(self, ref, shape, site):
        self.ref = ref
        self.shape = shape
        self.site = site
        self.received = False


class GradState:
    """What the last backward left in a tensor's .grad, to tell accumulation from zeroing."""

    __slots__ = (
        "ref",
        "grad_ref",
        "version",
        "value",
        "run",
        "site",
        "streak",
        "longest",
        "looped",
        "resets",
        "used",
    )

    def __init__(self, ref):
        self.ref = ref
        self.grad_ref = None  # the .grad tensor the last backward left
        self.version = -1  # its version then (zero_() and other in-place changes bump it)
        self.value = None  # a fingerprint of the tensor's own value then (an update step changes it)
        self.run = None
        self.site = None
        self.streak = 0  # consecutive backward calls that added into the same, unzeroed .grad
        self.longest = 0
        self.looped = None  # the backward line whose repeated calls accumulated, when it happened
        self.resets = 0
        self.used = False  # an accumulated .grad was read, or the tensor was updated between calls

    def step(self, zeroed: bool, updated: bool, site: tuple | None) -> None:
        """One more backward added into .grad: `zeroed` since the last one, the tensor `updated` since."""
        if updated and self.streak >= 2:
            self.used = True  # an update step consumed an accumulated gradient
        if zeroed:
            self.resets += 1
            self.streak = 1
            return
        self.streak += 1
        self.longest = max(self.longest, self.streak)
        if site is not None and site == self.site and self.looped is None:
            self.looped = site


def _fingerprint(data) -> tuple[float, float]:
    """Cheap summary of a tensor's value, to notice an update step between two backward calls."""
    flat = data.ravel()
    return (float(flat.sum()), float(flat.dot(flat)))


class Instrument(Observer):
    """The observer gradcli installs in engine's anomaly mode (see engine.autograd.anomaly.Observer)."""

    def __init__(self, sites: Sites, check_forward: bool = False):
        self.sites = sites
        self.check_forward = check_forward
        self.backward_calls = 0
        self._runs: list[int] = []  # stack of active backward runs (nested under create_graph)
        self._roots: list[list] = []  # their root nodes
        self._run_sites: dict[int, tuple | None] = {}
        self._pending: dict[int, list] = {}
        self.freed: dict[int, int] = {}  # id(node) -> the run that freed it
        self.leaves: dict[int, LeafUse] = {}
        self.grads: dict[int, GradState] = {}
        self.nonleaf_reads: dict[tuple, dict] = {}
        self.nonfinite: dict[int, dict] = {}  # id(node) -> what node_done saw, for the error's finding
        self.module_bumps: dict[tuple[int, int], ModuleCall] = {}  # (id(version counter), version) -> module
        self.errors: list[BaseException] = []  # the engine's errors, as raised (the script may catch them)

    # -- forward ------------------------------------------------------------------------
    def forward(self, node, inputs, out, trace) -> None:
        leaves = self.leaves
        for x in inputs:
            if (x.__class__ is Tensor or isinstance(x, Tensor)) and x._rg and x._node is None:
                use = leaves.get(id(x))
                if use is None or use.ref() is not x:
                    leaves[id(x)] = LeafUse(weakref.ref(x), shape_of(x), trace[0] if trace else None)
        if self.check_forward:
            data = out._data
            if data.dtype.kind == "f" and not finite_fast(data) and not all_finite(data):
                self._stop_at(node.name(), inputs, out, trace[0] if trace else None)

    def computed(self, name: str, inputs: tuple, out) -> None:
        if self.check_forward:
            data = out._data
            if is_float_array(data) and not finite_fast(data) and not all_finite(data):
                self._stop_at(name, inputs, out, None)

    def _stop_at(self, name: str, inputs, out, site: tuple | None) -> None:
        """Stop at an op whose output holds NaN/Inf (`--check-forward`), unless the infinity was meant
        (nonfinite.forward_anomaly); `site`, when not known, is looked up only then."""
        error = nonfinite.forward_error(name, inputs, out, site or anomaly.user_site(), self.sites)
        if error is not None:
            self.raised(error)
            raise error

    def bumped(self, tensor) -> None:
        """Which module's forward changed `tensor` in place, if any (x.relu_() inside ReLU)."""
        call = current_module()
        if call is not None:
            self.module_bumps[(id(tensor._vc), tensor._vc.version)] = call

    # -- backward -----------------------------------------------------------------------
    def backward_begin(self, roots, retain_graph, inputs, capture) -> None:
        self.backward_calls += 1
        run = self.backward_calls
        self._runs.append(run)
        self._roots.append([node for node, _ in roots])
        self._run_sites[run] = anomaly.user_site()
        self._pending[run] = []

    def run_site(self, run: int | None) -> tuple | None:
        return self._run_sites.get(run) if run is not None else None

    def released(self, node) -> None:
        if len(self.freed) >= MAX_FREED:
            self.freed.clear()
        self.freed[id(node)] = self._runs[-1] if self._runs else 0

    def node_done(self, node, grads, outputs) -> bool:
        """True when every output is finite (the engine's own NaN check then has nothing to find)."""
        finite = True
        for i, g in enumerate(outputs):
            if g is None:
                continue
            data = getattr(g, "_data", g)
            dtype = getattr(data, "dtype", None)
            if dtype is None or dtype.kind != "f" or finite_fast(data):
                continue
            finite = False
            if all_finite(data):
                continue
            what = "nan" if any(o is not None and has("nan", array_of(o)) for o in outputs) else "inf"
            self.nonfinite[id(node)] = {
                "stats": nonfinite.backward_stats(node, grads, outputs),
                "what": what,
                "diagnosis": self._diagnose(node, grads, data),
            }
            if what == "inf":  # torch would carry on; stop here, as check_nan does for NaN
                raise anomaly.nonfinite_error(node, "inf", i)
            return False  # NaN: the engine's check_nan raises torch's error right after this
        return finite

    def _diagnose(self, node, grads, grad_input) -> nonfinite.Diagnosis:
        """Why `node` returned `grad_input`, from the values it saved and the gradient it got."""
        given = grads[0] if grads else None
        grad_output = host_array(array_of(given)) if given is not None else None
        roots = self._roots[-1] if self._roots else [node]
        return nonfinite.diagnose(
            node, roots, saved_values(node), grad_output, host_array(grad_input), "engine", saved_values
        )

    def accumulating(self, variable, g) -> None:
        run = self._runs[-1] if self._runs else None
        key = id(variable)
        state = self.grads.get(key)
        if state is None or state.ref() is not variable:
            state = self.grads[key] = GradState(weakref.ref(variable))
        if state.run == run:
            return
        self._pending.setdefault(run, []).append(variable)
        use = self.leaves.get(key)
        if use is not None and use.ref() is variable:
            use.received = True
        old = variable._grad
        site = self.run_site(run)
        if state.run is None:
            state.streak = 1
            return
        updated = state.value is not None and _fingerprint(variable._data) != state.value
        previous = state.grad_ref() if state.grad_ref is not None else None
        zeroed = (
            old is None
            or old is not previous
            or old._vc.version != state.version
            or not bool((array_of(old) != 0).any())
        )
        state.step(zeroed, updated, site)

    def backward_end(self, inputs, captured) -> None:
        run = self._runs.pop() if self._runs else None
        if self._roots:
            self._roots.pop()
        for variable in self._pending.pop(run, []):
            state = self.grads.get(id(variable))
            grad = variable._grad
            if state is None or grad is None:
                continue
            state.grad_ref = weakref.ref(grad)
            state.version = grad._vc.version
            state.value = _fingerprint(variable._data) if state.streak >= 2 else None
            state.run = run
            state.site = self.run_site(run)
        if captured is not None and inputs is not None:
            for t, g in zip(inputs, captured):
                use = self.leaves.get(id(t))
                if g is not None and use is not None and use.ref() is t:
                    use.received = True

    # -- errors -------------------------------------------------------------------------
    def raised(self, exc) -> None:
        """Kept when raised, not when the script ends: the script may catch it, or it ends a thread.
        Raised in a backward run, it cut the run short: the leaves below its roots count as reached."""
        if getattr(exc, "autograd_kind", None) == "freed" and self._roots:
            exc.backward_roots = self._roots[-1]  # where the second backward came from
            run = self._runs[-1]
            exc.ran_saved = any(
                self.freed.get(id(n)) == run and getattr(n, "saved_names", ())
                for n in walk(exc.backward_roots)
            )
        if len(self.errors) < MAX_RAISED and all(exc is not seen for seen in self.errors):
            self.errors.append(exc)
        if self._roots:
            mark_reached(self.leaves, graph_leaves(self._roots[-1]))

    # -- reads --------------------------------------------------------------------------
    def grad_read(self, tensor) -> None:
        note_grad_read(self.grads, self.nonleaf_reads, tensor, tensor._retains_grad, node_site, shape_of)


def saved_values(node) -> dict:
    """What an engine node saved for backward, by name ("self", "result", "exponent"): arrays on the host."""
    saved = {}
    pairs = node.saved_pairs() if hasattr(node, "saved_pairs") else None
    for name, (value, _) in zip(getattr(node, "saved_names", ()), pairs or ()):
        saved[name] = host_array(array_of(value)) if isinstance(value, Tensor) else value
    saved.update(zip(getattr(node, "attr_names", ()), getattr(node, "_attrs", ())))
    return saved


def graph_leaves(roots) -> Iterator:
    """The tensors that the AccumulateGrad nodes below `roots` feed (engine and torch graphs alike)."""
    for node in walk([root for root in roots if root is not None]):
        variable = getattr(node, "variable", None)
        if variable is not None:
            yield variable


def mark_reached(leaves: dict[int, LeafUse], tensors) -> None:
    """A backward reached these tensors, or would have if an error had not cut it short: not unused."""
    for tensor in tensors:
        use = leaves.get(id(tensor))
        if use is not None and use.ref() is tensor:
            use.received = True


def note_grad_read(
    grads: dict, nonleaf_reads: dict, tensor, retains_grad: bool, created_at, shape_of_tensor
) -> None:
    """A read of `tensor.grad`, for engine and torch instruments alike: of an accumulated gradient
    (it was used, so accumulating was meant), or of a non-leaf's, which is None (a finding).

    `created_at(node)` and `shape_of_tensor(tensor)` read what each library records."""
    if tensor.grad_fn is None or retains_grad:
        state = grads.get(id(tensor))
        if state is not None and state.streak >= 2 and state.ref() is tensor:
            state.used = True  # the script read an accumulated gradient
        return
    site = anomaly.user_site()
    key = (site[0].co_filename, site[1]) if site else None
    record = nonleaf_reads.get(key)
    if record is None:
        nonleaf_reads[key] = {
            "site": site,
            "count": 1,
            "node": tensor.grad_fn.name(),
            "created": created_at(tensor.grad_fn),
            "shape": shape_of_tensor(tensor),
        }
    else:
        record["count"] += 1


def _caller():
    """The frame that entered `instrumented` (past contextlib's): gradcli's, which runs the script."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == contextlib.__file__:
        frame = frame.f_back
    return frame


@contextmanager
def instrumented(instrument: Instrument) -> Iterator[None]:
    """Anomaly mode on (NaN checks included), held on whatever the script asks, with `instrument` as
    the observer; restored after."""
    from engine.autograd import anomaly

    previous = anomaly.set_observer(instrument)
    mode = anomaly.set_detect_anomaly(True, check_nan=True)
    hold = anomaly.held()  # the script may turn anomaly mode off: only what it reports changes
    hold.__enter__()
    try:
        with warnings.catch_warnings(), anomaly.traces_stop_at(_caller()):
            # What these warnings say becomes findings; the user's other warnings still show.
            warnings.filterwarnings("ignore", message=r"Error detected in ", category=UserWarning)
            warnings.filterwarnings("ignore", message=r"The \.grad attribute of a Tensor that is not a leaf")
            yield
    finally:
        hold.__exit__(None, None, None)
        mode.__exit__(None, None, None)
        anomaly.set_observer(previous)
