"""Pairs as pytest items: each @gradcli.pair of a test module passes or fails with its diff report."""

import textwrap

import pytest

from gradcli.diff.pairs import collecting
from tests.check.test_pytest_plugin import PLUGIN

pytest_plugins = ["pytester"]

PAIRS = """
import engine, gradcli

def inputs():
    return (engine.randn(4, 3, requires_grad=True),)

def reference(x):
    return (x.sin() * 2).sum()

@gradcli.pair(reference=reference, inputs=inputs)
def same(x):
    return (2 * x.sin()).sum()

@gradcli.pair(reference=reference, inputs=inputs)
def drifted(x):
    return (x.sin() * 2.01).sum()

def test_plain():
    assert True
"""


def test_each_pair_is_an_item_failing_with_its_report(pytester):
    (pytester.path / "test_pairs.py").write_text(textwrap.dedent(PAIRS).lstrip())
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "test_pairs.py::same PASSED" in out and "test_pairs.py::drifted FAILED" in out
    result.stdout.fnmatch_lines(["*reference vs drifted  DIFFER", "*forward: walking from the inputs*"])
    selected = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider", "-k", "same")
    selected.assert_outcomes(passed=1, deselected=2)


def test_pairs_are_recorded_by_their_own_collector():
    import gradcli

    with collecting() as found:
        gradcli.pair(reference=abs, inputs=(1,))(round)
    assert [p.name for p in found] == ["round"]
    with pytest.raises(TypeError, match="must be callable"):
        gradcli.pair(reference=1, inputs=())
