"""torch, when a user's file uses it: never imported by gradcli itself, only noticed.

gradcli runs engine files and PyTorch files alike. Importing torch costs a second or more,
so gradcli never imports it on its own: it watches for the user's code importing it
(`after_torch_import`, a `sys.meta_path` finder that runs callbacks once torch's module has
executed) and asks `sys.modules` whether a value is a torch tensor (`is_torch_tensor`).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

TORCH_MISSING = "this file imports torch, which is not installed: pip install 'gradcli[torch]'"


def torch_module() -> Any | None:
    """torch, if the user's code (or anything) has imported it; never imports it."""
    return sys.modules.get("torch")


def is_torch_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and issubclass(type(value), torch.Tensor)  # never a user's __class__


def is_uninitialized(value: Any) -> bool:
    """Whether `value` is torch's UninitializedParameter (or buffer): a lazy module's, before its first call."""
    torch = sys.modules.get("torch")
    mixin = getattr(getattr(getattr(torch, "nn", None), "parameter", None), "UninitializedTensorMixin", None)
    return mixin is not None and isinstance(value, mixin)


def is_engine_tensor(value: Any) -> bool:
    engine = sys.modules.get("engine")
    return engine is not None and issubclass(type(value), engine.Tensor)


def is_missing_torch(exc: BaseException) -> bool:
    """Whether `exc` is the ImportError of a file importing torch where it is not installed."""
    name = getattr(exc, "name", None) or ""
    return isinstance(exc, ModuleNotFoundError) and (name == "torch" or name.startswith("torch."))


class MixedTensors(Exception):
    """Values of one case (or one graph) that are both engine and torch tensors."""

    def __init__(self, engine_names: list[str], torch_names: list[str]):
        self.engine_names = engine_names
        self.torch_names = torch_names
        super().__init__(
            f"mixes engine and torch tensors ({_listed(engine_names)} "
            f"{'is an engine.Tensor' if len(engine_names) == 1 else 'are engine.Tensors'}; "
            f"{_listed(torch_names)} {'is a torch.Tensor' if len(torch_names) == 1 else 'are torch.Tensors'}): "
            "gradients cannot flow between the two libraries, use one of them"
        )


def _listed(names: list[str]) -> str:
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def framework_of(named: Iterable[tuple[str, Any]]) -> str | None:
    """ "engine" or "torch": the library of the tensors among `named` values (None: no tensor).

    Raises MixedTensors naming both sides when there are tensors of both."""
    engine_names, torch_names = [], []
    for name, value in named:
        if is_torch_tensor(value):
            torch_names.append(name)
        elif is_engine_tensor(value):
            engine_names.append(name)
    if engine_names and torch_names:
        raise MixedTensors(engine_names, torch_names)
    if torch_names:
        return "torch"
    return "engine" if engine_names else None


@contextmanager
def after_torch_import(callback: Callable[[Any], None]) -> Iterator[None]:
    """For the block: call `callback(torch)` as soon as torch is imported (at once if it is).

    Only a finder is added to `sys.meta_path`; torch's own import machinery is untouched.
    """
    if sys.modules.get("torch") is not None:
        callback(sys.modules["torch"])
        yield
        return
    watcher = _TorchWatcher(callback)
    sys.meta_path.insert(0, watcher)
    try:
        yield
    finally:
        try:
            sys.meta_path.remove(watcher)
        except ValueError:
            pass


class _TorchWatcher:
    """Finds torch as the other finders would, with a loader that calls back after executing it.

    The finder and loader protocols by duck typing: importlib.abc costs ~4 ms of imports."""

    def __init__(self, callback: Callable[[Any], None]):
        self.callback = callback
        self.finding = False

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001 - the finder protocol
        if name != "torch" or self.finding:
            return None
        self.finding = True
        try:
            spec = importlib.util.find_spec(name)  # the other finders, other watchers included
        finally:
            self.finding = False
        if spec is None or spec.loader is None:
            return None
        spec.loader = _CallingBackLoader(spec.loader, self.callback)
        return spec


class _CallingBackLoader:
    def __init__(self, loader: Any, callback: Callable[[Any], None]):
        self.loader = loader
        self.callback = callback

    def create_module(self, spec):  # noqa: ANN001
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:  # noqa: ANN001
        spec = module.__spec__
        if spec.submodule_search_locations is None:  # a module file, not the torch package
            raise ImportError(
                f"import torch found {spec.origin}, not PyTorch: the local torch.py shadows the torch "
                "package (rename it)",
                name="torch",
                path=spec.origin,
            )
        self.loader.exec_module(module)
        self.callback(module)

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...
        return getattr(self.loader, name)


def imported_frameworks(source: str) -> set[str]:
    """Which of "engine" and "torch" a file's source imports (anywhere in it, by its imports)."""
    import ast

    from .source_tree import parsed

    found: set[str] = set()
    tree = parsed(source)
    if tree is None:
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in ("engine", "torch"):
                found.add(top)
    return found


def library_of(source: str) -> str:
    """ "torch" for a file whose source imports torch, else "engine": what its hints should name."""
    return "torch" if "torch" in imported_frameworks(source) else "engine"
