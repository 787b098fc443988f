"""What the engine's observer records, recorded for torch scripts through torch's own extension points.

Installed by the runner only once the script imports torch (`libraries.after_torch_import`),
removed when it ends, in the script's thread and in every thread it starts (torch keeps both hooks
per thread); no torch function is patched. Two hooks:

- a `TorchFunctionMode` sees each torch call the script makes (not the calls inside them): the
  user's line (one stack walk), the versions of its tensor arguments before and after (a bump is
  an in-place change, whatever spelled it: `add_`, `x[i] = v`, `+=`, `out=`,
  `F.relu(inplace=True)`) with the nn.Module whose forward made it, the nodes it created (their line in `grad_fn.metadata`, and a post
  hook that stops at the first NaN/Inf gradient), the leaves it used, `backward()` /
  `autograd.grad()` calls (what they added into `.grad`) and `.grad` reads;
- saved-tensor hooks, pushed around each of those calls: each saved tensor is packed as a detached
  alias (same storage and version counter, no reference cycle) with its version and line. torch
  skips its own version check for hooked saved tensors, so unpack makes it, raising torch's error
  with the record.

The instrument never changes what the script does: where a hook cannot be kept (saved-tensor hooks
disabled, as torch.func's grad, vjp and jacrev do, or the script's own hooks in place; gradients
batched by vmap, which cannot be read) it steps aside for that call and says so (`unwatched`).
The errors it sees raised are kept (`errors`), since the script may catch them or they may end a
thread.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.autograd.anomaly import user_site

from ..program.exception_text import message_of
from ..program.modules import ModuleCall, current_module
from ..program.sites import SITE_KEY, Sites
from ..program.threads import in_new_threads
from .instrument import MAX_RAISED, GradState, LeafUse, graph_leaves, mark_reached, note_grad_read
from .nonfinite import diagnose, forward_anomaly, walk
from .stats import tensor_stats

#: grad_fn.metadata key of the user's line that created a node.
#: In-place records kept per storage (the most recent ones), and storages kept (cleared past this,
#: losing only the lines of in-place changes made before).
MAX_BUMPS = 32
MAX_STORAGES = 1 << 16


class SavedRecord:
    """A tensor saved for backward: a detached alias sharing its version counter, and where it was saved."""

    __slots__ = ("tensor", "version", "site", "ref", "grad_fn_name", "output_nr", "saver", "is_output")

    def __init__(
        self, tensor, version: int, site: tuple | None, ref, grad_fn_name: str | None, output_nr: int
    ):
        self.tensor = tensor
        self.version = version
        self.site = site
        self.ref = ref  # the tensor itself, weakly
        self.grad_fn_name = grad_fn_name  # its grad_fn's name() when saved
        self.output_nr = output_nr
        self.saver: str | None = None  # the node that saved it (known once its op returned)
        self.is_output = False  # saved by the op that produced it


class _CallState(threading.local):
    """The torch call running now in this thread: the user's line, the tensors saved during it."""

    site: tuple | None = None
    packed: list[SavedRecord] | None = None


class TorchInstrument:
    """Records what gradcli anomaly's findings need, for torch tensors (see the module's docstring)."""

    def __init__(self, torch: Any, sites: Sites, check_forward: bool = False):
        self.torch = torch
        self.sites = sites
        self.check_forward = check_forward
        self.backward_calls = 0
        self.leaves: dict[int, LeafUse] = {}
        self.grads: dict[int, GradState] = {}
        self.nonleaf_reads: dict[tuple, dict] = {}
        # storage -> (before, after, site, the nn.Module whose forward made the change)
        self.bumps: dict[int, list[tuple[int, int, tuple | None, ModuleCall | None]]] = {}
        self.errors: list[BaseException] = []  # torch's autograd errors and the instrument's, as raised
        self.unwatched: dict[str, list] = {}  # what was not watched -> [its first site, how many times]
        self._now = _CallState()
        # Backward calls running now: their root nodes, and whether each ran a node holding saved
        # tensors yet; read by node hooks, which run on torch's device threads too.
        self._roots: list[list] = []
        self._ran_saved: list[bool] = []
        self._autograd = torch._C._autograd
        self._functorch = torch._C._functorch
        self._tensor = torch.Tensor
        self._grad_attribute = torch._C.TensorBase.grad
        self._backward_method = torch.Tensor.backward
        self._grad = torch.autograd.grad

    # -- the torch function mode ---------------------------------------------------------------
    def call(self, func, args: tuple, kwargs: dict) -> Any:
        if getattr(func, "__self__", None) is self._grad_attribute:
            self._grad_read(args[0])
            return func(*args, **kwargs)
        if func is self._backward_method or func is self._grad:
            return self._backward(func, args, kwargs)
        site = user_site()
        tensors = self._tensors(args, kwargs)
        versions = [_version(t) for t in tensors]
        now = self._now
        outer = now.site, now.packed
        now.site, now.packed = site, []
        unhooked = self._hook_saved()
        try:
            out = func(*args, **kwargs)
        except RuntimeError as exc:
            _tag_leaf_inplace(exc, tensors)
            if hasattr(exc, "autograd_kind"):
                self.raised(exc)
            raise
        finally:
            if unhooked is None:
                self._autograd._pop_saved_tensors_default_hooks()
            packed = now.packed
            now.site, now.packed = outer
        for t, before in zip(tensors, versions):
            after = _version(t)
            if after != before:
                self._bumped(t, before, after, site)
        if self.torch.is_grad_enabled() and self._recorded(out, tensors, site, packed) and unhooked:
            self._step_aside(
                f"tensors saved for backward were not checked for in-place changes: {unhooked}", site
            )
        if self.check_forward:
            self._check_forward(func, out, tensors, site)
        return out

    def _hook_saved(self) -> str | None:
        """Push the saved-tensor hooks for a call (None), or say why they cannot be: torch or the
        script disabled them (torch.func's grad, vjp, jacrev), or the script's own hooks hold them."""
        autograd = self._autograd
        disabled = autograd._saved_tensors_hooks_get_disabled_error_message()
        if disabled is not None:
            return f'saved-tensor hooks are disabled there ("{disabled}")'
        if autograd._top_saved_tensors_default_hooks(False) is not None:
            return "the script's own saved-tensor hooks hold them"
        autograd._push_saved_tensors_default_hooks(self.pack, self.unpack)
        return None

    def _step_aside(self, what: str, site: tuple | None) -> None:
        """Note what was not watched, and the first line where (counted after that)."""
        record = self.unwatched.get(what)
        if record is None:
            self.unwatched[what] = [site, 1]
        else:
            record[1] += 1

    def raised(self, exc: BaseException) -> None:
        """Kept when raised, not when the script ends: the script may catch it, or it ends a thread."""
        if len(self.errors) < MAX_RAISED and all(exc is not seen for seen in self.errors):
            self.errors.append(exc)

    def _tensors(self, args: tuple, kwargs: dict) -> list:
        kind = self._tensor
        found = []
        for value in (*args, *kwargs.values()) if kwargs else args:
            if isinstance(value, kind):
                found.append(value)
            elif type(value) in (list, tuple):
                found.extend(v for v in value if isinstance(v, kind))
        return found

    def _bumped(self, tensor, before: int, after: int, site: tuple | None) -> None:
        key = _storage_key(tensor)
        if key is None:
            return
        if len(self.bumps) >= MAX_STORAGES and key not in self.bumps:
            self.bumps.clear()
        records = self.bumps.setdefault(key, [])
        records.append((before, after, site, current_module()))
        if len(records) > MAX_BUMPS:
            del records[0]

    def _recorded(self, out, tensors: list, site: tuple | None, packed: list[SavedRecord]) -> bool:
        """The nodes the call created (their line, a NaN/Inf check) and the leaves it used; whether it
        created one."""
        outputs = out if type(out) in (tuple, list) else (out,)
        saver = None
        saves = bool(packed)
        for t in outputs:
            fn = getattr(t, "grad_fn", None) if isinstance(t, self._tensor) else None
            if fn is None:
                continue
            meta = fn.metadata
            if SITE_KEY in meta:
                continue
            meta[SITE_KEY] = site
            saver = fn.name()
            fn.register_hook(functools.partial(self._check_gradients, saver, site, meta, saves))
        if saver is None:
            return False
        for record in packed:
            record.saver = saver
            original = record.ref()
            record.is_output = original is not None and any(original is t for t in outputs)
        for t in tensors:
            if t.requires_grad and t.grad_fn is None:
                use = self.leaves.get(id(t))
                if use is None or use.ref() is not t:
                    self.leaves[id(t)] = LeafUse(weakref.ref(t), list(t.shape), site)
        return True

    def _check_forward(self, func, out, tensors: list, site: tuple | None) -> None:
        """Stop at the first call whose output holds NaN/Inf (`--check-forward`)."""
        outputs = out if type(out) in (tuple, list) else (out,)
        strided = self.torch.strided
        for t in outputs:
            if (
                not isinstance(t, self._tensor)
                or not t.is_floating_point()
                or t.layout != strided
                or t.is_meta
            ):
                continue
            what = self._nonfinite(t, "outputs", site)
            if what is None:
                continue
            fn = t.grad_fn
            name = fn.name() if fn is not None else _function_name(func)
            stats = [_tensor_stats("output", t)] + [
                _tensor_stats(f"input {i}", x) for i, x in enumerate(tensors)
            ]
            values = [_numpy(x) for x in tensors]
            error = forward_anomaly(name, stats, tensors, values, _numpy(t), site, self.sites)
            if error is not None:
                self.raised(error)
                raise error

    def _nonfinite(self, tensor, what: str, site: tuple | None) -> str | None:
        """`nan` or `inf` when `tensor` holds one; None when it is finite, or cannot be read (vmap's
        batched tensors), which is noted."""
        if self._batched(tensor):
            self._step_aside(f"{what} batched by vmap were not checked for NaN/Inf", site)
            return None
        values = tensor.detach()
        if values.numel() == 0:
            return None
        total = values.sum().item()
        if total - total == 0 or bool(self.torch.isfinite(values).all()):
            return None
        return "nan" if bool(self.torch.isnan(values).any()) else "inf"

    def _batched(self, tensor) -> bool:
        """Whether `tensor` is batched by vmap (torch.func's, or autograd.functional's vectorize=True),
        where its values cannot be read."""
        functorch = self._functorch
        if functorch.is_batchedtensor(tensor) or functorch.is_legacy_batchedtensor(tensor):
            return True
        layers = functorch.get_interpreter_stack()
        return layers is not None and any(layer.key() == functorch.TransformType.Vmap for layer in layers)

    # -- saved tensors -------------------------------------------------------------------------
    def pack(self, tensor) -> SavedRecord:
        fn = tensor.grad_fn
        record = SavedRecord(
            tensor.detach(),
            tensor._version,
            self._now.site or user_site(),
            weakref.ref(tensor),
            fn.name() if fn is not None else None,
            tensor.output_nr,
        )
        packed = self._now.packed
        if packed is not None:
            packed.append(record)
        return record

    def unpack(self, record: SavedRecord):
        tensor = record.tensor
        if tensor._version != record.version:
            error = modified_error(record)
            self.raised(error)
            raise error
        return tensor

    def modifications(self, record: SavedRecord) -> dict[int, tuple]:
        """version -> the line whose in-place change bumped the saved tensor's counter to it."""
        out = {}
        for before, after, site, _ in self.bumps.get(_storage_key(record.tensor), ()):
            for version in range(before + 1, after + 1):
                out[version] = site
        return out

    def module_of_change(self, record: SavedRecord) -> ModuleCall | None:
        """The nn.Module whose forward made the first in-place change to the saved tensor, if one did."""
        first = record.version + 1
        for before, after, _, module in self.bumps.get(_storage_key(record.tensor), ()):
            if before < first <= after:
                return module
        return None

    # -- backward ------------------------------------------------------------------------------
    def _check_gradients(
        self, name: str, site: tuple | None, meta: dict, saves: bool, grad_inputs: tuple, grad_outputs: tuple
    ) -> None:
        """A node's post hook: stop at the first gradient holding NaN/Inf, as check_nan does for NaN.

        `meta` is the node's metadata, which finds the node in the graph (a node held by its own
        hook would be freed only by the cyclic garbage collector, with its saved tensors); `saves`,
        whether it saved tensors (a backward that ran one went through a graph not yet freed)."""
        if saves and self._ran_saved:
            self._ran_saved[-1] = True
        for index, g in enumerate(grad_inputs):
            if g is None or not g.is_floating_point():
                continue
            what = self._nonfinite(g, "gradients", site)
            if what is None:
                continue
            exc = RuntimeError(f"Function '{name}' returned {what} values in its {index}th output.")
            exc.autograd_kind = f"{what}-in-backward"
            exc.output_index = index
            exc.node_name = name
            exc.node_site = site
            roots = self._roots[-1] if self._roots else []
            node = next((n for n in walk(roots) if n.metadata is meta), None)
            saved = _saved_values(node) if node is not None else {}
            exc.stats = _stats(name, grad_inputs, grad_outputs, saved)
            if node is not None:
                given = grad_outputs[0] if grad_outputs else None
                exc.diagnosis = diagnose(
                    node, roots, saved, _numpy(given), _numpy(g), self.torch.__name__, _saved_values
                )
            self.raised(exc)
            raise exc

    def _backward(self, func, args: tuple, kwargs: dict) -> Any:
        self.backward_calls += 1
        run, site = self.backward_calls, user_site()
        before = []
        for key, use in list(self.leaves.items()):
            leaf = use.ref()
            if leaf is None:
                if use.received:
                    del self.leaves[key]
                continue
            grad = leaf.grad
            before.append((use, leaf, grad, _version(grad) if grad is not None else None))
        outputs = args[0] if args else kwargs.get("outputs", kwargs.get("tensors"))
        roots = [t.grad_fn for t in self._tensors((outputs,), {}) if t.grad_fn is not None]
        self._roots.append(roots)
        self._ran_saved.append(False)
        unhooked = self._hook_saved()
        try:
            result = func(*args, **kwargs)
        except RuntimeError as exc:
            _tag_backward_error(exc, args)
            if getattr(exc, "autograd_kind", None) == "freed":
                exc.backward_roots = roots  # where the second backward came from
                exc.ran_saved = self._ran_saved[-1]
            self.raised(exc)
            mark_reached(self.leaves, graph_leaves(roots))
            raise
        finally:
            self._roots.pop()
            self._ran_saved.pop()
            if unhooked is None:
                self._autograd._pop_saved_tensors_default_hooks()
        for use, leaf, grad, version in before:
            now = leaf.grad
            if now is not None and (now is not grad or _version(now) != version):
                use.received = True
                self._accumulated(leaf, grad, version, run, site)
        if func is self._grad and result is not None:
            inputs = kwargs.get("inputs", args[1] if len(args) > 1 else ())
            inputs = (inputs,) if isinstance(inputs, self._tensor) else inputs
            for t, g in zip(inputs, result):
                use = self.leaves.get(id(t))
                if g is not None and use is not None and use.ref() is t:
                    use.received = True
        return result

    def _accumulated(self, leaf, old, old_version: int | None, run: int, site: tuple | None) -> None:
        """A backward added into `leaf.grad` (which was `old` at version `old_version` before it)."""
        state = self.grads.get(id(leaf))
        if state is None or state.ref() is not leaf:
            state = self.grads[id(leaf)] = GradState(weakref.ref(leaf))
        if state.run is None:
            state.streak = 1
        else:
            previous = state.grad_ref() if state.grad_ref is not None else None
            zeroed = (
                old is None
                or old is not previous
                or old_version != state.version
                or not bool(old.detach().any())
            )
            updated = state.value is not None and self._fingerprint(leaf) != state.value
            state.step(zeroed, updated, site)
        grad = leaf.grad
        state.grad_ref = weakref.ref(grad)
        state.version = _version(grad)
        state.value = self._fingerprint(leaf) if state.streak >= 2 else None
        state.run = run
        state.site = site

    def _fingerprint(self, tensor) -> tuple[float, float]:
        """Cheap summary of a tensor's value, to notice an update step between two backward calls."""
        flat = tensor.detach().reshape(-1).double()
        return (float(flat.sum()), float(flat.dot(flat)))

    # -- reads ---------------------------------------------------------------------------------
    def _grad_read(self, tensor) -> None:
        note_grad_read(
            self.grads,
            self.nonleaf_reads,
            tensor,
            tensor.retains_grad,
            lambda node: node.metadata.get(SITE_KEY),
            lambda t: list(t.shape),
        )


def modified_error(record: SavedRecord) -> RuntimeError:
    """torch's error for a saved tensor modified in place (which torch does not check with hooks),
    carrying the record."""
    tensor = record.tensor
    original = record.ref()
    if record.is_output and record.saver:
        producer = _op_of(record.saver)
    else:
        fn = original.grad_fn if original is not None else None
        producer = fn.name() if fn is not None else record.grad_fn_name
    sizes = ", ".join(map(str, tensor.shape))
    exc = RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{tensor.type()} [{sizes}]]"
        + (f", which is output {record.output_nr} of {producer}," if producer else "")
        + f" is at version {tensor._version}; expected version {record.version} instead. Hint: enable anomaly "
        "detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )
    exc.saved_record = record
    return exc


def _op_of(node_name: str) -> str:
    """`ExpBackward0` -> `Exp`: how torch's message names the op whose own output was saved."""
    head, sep, _ = node_name.rpartition("Backward")
    return head if sep else node_name


def _version(tensor) -> int | None:
    try:
        return tensor._version
    except RuntimeError:  # an inference tensor has no version counter
        return None


def _storage_key(tensor) -> int | None:
    """What views of one storage share: its address."""
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # sparse, nested, meta ...
        return None


def _tag_leaf_inplace(exc: RuntimeError, tensors: list) -> None:
    """torch's leaf-in-place error, tagged as the engine tags its own (`autograd_kind`, `tensor`)."""
    message = message_of(exc)
    if message.startswith("a leaf Variable that requires grad"):
        kind = "leaf-inplace"
    elif message.startswith("a view of a leaf Variable that requires grad"):
        kind = "view-of-leaf-inplace"
    else:
        return
    for t in tensors:
        leaf = t if t._base is None else t._base
        if leaf.requires_grad and leaf.grad_fn is None:
            exc.autograd_kind = kind
            exc.tensor = leaf
            return


def _tag_backward_error(exc: RuntimeError, args: tuple) -> None:
    """torch's errors of a backward call, tagged as the engine tags its own (`autograd_kind`, `tensor`)."""
    message = message_of(exc)
    if message.startswith("Trying to backward through the graph a second time"):
        exc.autograd_kind = "freed"
    elif message.startswith("grad can be implicitly created only for scalar outputs"):
        exc.autograd_kind = "implicit-grad"
        root = args[0] if args else None
        exc.tensor = root[0] if type(root) in (tuple, list) and root else root


def _stats(name: str, grad_inputs: tuple, grad_outputs: tuple, saved: dict) -> list:
    """NaN/Inf counts and finite ranges of what a node's backward got, saved and returned."""
    out = [_tensor_stats(f"grad_output[{i}] (into {name})", g) for i, g in enumerate(grad_outputs)]
    for key, value in saved.items():
        stats = tensor_stats(f"saved {key}", value)
        if stats is not None:
            stats.dtype = str(value.dtype)  # numpy's name is torch's: float32
            out.append(stats)
    out += [_tensor_stats(f"grad_input[{i}]", g) for i, g in enumerate(grad_inputs)]
    return [s for s in out if s is not None]


def _tensor_stats(label: str, tensor):
    """NaN/Inf counts and the finite range of a float torch tensor; None for any other value."""
    if tensor is None or not tensor.is_floating_point():
        return None
    stats = tensor_stats(label, _numpy(tensor))
    stats.dtype = str(tensor.dtype).removeprefix("torch.")
    return stats


def _numpy(tensor):
    """A tensor's values as a numpy array, half precisions widened (None stays None)."""
    if tensor is None:
        return None
    host = tensor.detach().cpu()
    return (host.float() if host.is_floating_point() and host.element_size() < 4 else host).numpy()


def _saved_values(node) -> dict:
    """What a node saved for backward, by name (`_saved_self` -> "self"): tensors as numpy arrays."""
    saved = {}
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(node, attr)
        except RuntimeError:  # freed, or changed in place
            continue
        if hasattr(value, "is_floating_point"):
            value = _numpy(value) if value.is_floating_point() else None
        if value is not None:
            saved[attr.removeprefix("_saved_")] = value
    return saved


def _function_name(func) -> str:
    """The op a torch function runs, as a node would name it: `Tensor.__truediv__` -> `div`."""
    name = getattr(func, "__name__", str(func)).strip("_")
    return _OPERATORS.get(name, name)


#: Tensor operators whose op has another name than theirs (less the underscores).
_OPERATORS = {
    **dict.fromkeys(("truediv", "rtruediv", "itruediv", "div"), "div"),
    **dict.fromkeys(("floordiv", "rfloordiv", "ifloordiv"), "floor_divide"),
    **dict.fromkeys(("radd", "iadd"), "add"),
    **dict.fromkeys(("rsub", "isub"), "sub"),
    **dict.fromkeys(("rmul", "imul"), "mul"),
    **dict.fromkeys(("rpow", "ipow"), "pow"),
    "rmatmul": "matmul",
}


@contextmanager
def torch_instrumented(instrument: TorchInstrument) -> Iterator[None]:
    """The torch function mode for the block, in this thread and in each thread started during it."""
    from torch.overrides import TorchFunctionMode

    class Recording(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return instrument.call(func, args, kwargs or {})

    mode = Recording()
    with mode, in_new_threads(mode.__enter__):
        yield
