"""The type stubs name every method and function the engine installs at import, and are current."""

from __future__ import annotations

import ast
import sys

from paths import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

import make_stubs  # noqa: E402

from engine.ops import api  # noqa: E402


def defined(path: str, in_class: str | None = None) -> set[str]:
    tree = ast.parse((ROOT / path).read_text())
    body = tree.body
    if in_class is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == in_class).body
    return {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_the_committed_stubs_are_what_the_registry_gives():
    assert make_stubs.main(["--check"]) == 0, "run python scripts/make_stubs.py"


def test_every_registered_method_and_function_is_in_the_stubs():
    make_stubs.load_everything()
    methods = defined("engine/tensor.pyi", "Tensor")
    assert set(api.METHODS) <= methods
    assert set(api.IN_PLACE) <= methods
    assert set(api.FUNCTIONS) <= defined("engine/__init__.pyi")


def test_a_method_keeps_its_parameters_with_self_first():
    text = (ROOT / "engine" / "tensor.pyi").read_text()
    assert "    def add(self, other: Any, *, alpha: Any = ...) -> Tensor: ..." in text
    assert (
        "    def backward(self, gradient: Any = ..., retain_graph: Any = ..., create_graph: Any = ..., "
        in text
    )
