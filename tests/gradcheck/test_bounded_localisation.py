"""Fast mode localises the wrong entries of a large Jacobian by bisection, in O(k log n) forwards.

The functions count their forwards; the located entries must be exactly the wrong ones, and
the count is reported as a lower bound. Run on the engine and, where installed, on torch
through `TorchTensors`.
"""

import math
import os
import subprocess
import sys
import textwrap

import numpy
import pytest
from json_contract import validated
from paths import ROOT

import engine
from engine.autograd import check_gradients


def engine_library():
    class WrongAt(engine.autograd.Function):
        """2x, whose backward is 1000 times too large at the entries `wrong`."""

        wrong: list = []

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            grad = (g * 2).detach().numpy().copy()
            grad.reshape(-1)[WrongAt.wrong] *= 1000.0
            return engine.tensor(grad)

    return WrongAt, lambda n: engine.randn(n, dtype=engine.float64, requires_grad=True), {}


def torch_library():
    torch = pytest.importorskip("torch")
    from gradcli.libraries.torch_tensors import TorchTensors

    class WrongAt(torch.autograd.Function):
        wrong: list = []

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            grad = g * 2
            grad.reshape(-1)[WrongAt.wrong] *= 1000.0
            return grad

    return (
        WrongAt,
        lambda n: torch.randn(n, dtype=torch.float64, requires_grad=True),
        {"tensors": TorchTensors()},
    )


LIBRARIES = [engine_library, torch_library]


def counted(fn):
    """fn, counting its calls in `.forwards`."""

    def wrapper(*args):
        wrapper.forwards += 1
        return fn(*args)

    wrapper.forwards = 0
    return wrapper


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("wrong", [[40000], [5, 40000, 65535]])
def test_forwards_grow_with_k_log_n_and_the_wrong_entries_are_found(library, wrong):
    WrongAt, randn, kwargs = library()
    WrongAt.wrong = wrong
    n = 2**16
    f = counted(lambda x: WrongAt.apply(x).sum())
    report = check_gradients(f, (randn(n),), fast_mode=True, **kwargs)
    assert not report.passed and report.localized
    (pair,) = report.pairs
    assert sorted(m[1] for m in pair.mismatches) == [(i,) for i in wrong]
    assert all(m[2] == pytest.approx(2.0) and m[3] == pytest.approx(2000.0) for m in pair.mismatches)
    assert pair.mismatch_count == len(wrong) and not pair.mismatch_count_exact
    assert pair.numerical_jacobian is None  # nothing of size n x m was built
    assert f.forwards <= 5 * len(wrong) * math.log2(n) + 10
    message = report.message()
    assert f"At least {len(wrong)} " in message and "located by bisection" in message


@pytest.mark.parametrize("library", LIBRARIES)
def test_vector_outputs_are_bisected_too(library):
    WrongAt, randn, kwargs = library()
    WrongAt.wrong = [7, 3000]
    f = counted(WrongAt.apply)
    report = check_gradients(f, (randn(2**12),), fast_mode=True, **kwargs)
    (pair,) = report.pairs
    assert sorted((m[0], m[1]) for m in pair.mismatches) == [((7,), (7,)), ((3000,), (3000,))]
    assert pair.worst_input_index in {(7,), (3000,)} and pair.max_abs_err == pytest.approx(1998.0)
    assert f.forwards <= 5 * 2 * 12 + 10


def test_a_cap_on_located_entries_reports_a_lower_bound():
    WrongAt, randn, _ = engine_library()
    WrongAt.wrong = list(range(100, 2**14, 600))  # 28 wrong entries
    f = counted(lambda x: WrongAt.apply(x).sum())
    report = check_gradients(f, (randn(2**14),), fast_mode=True, max_mismatches=4)
    (pair,) = report.pairs
    assert [m[1][0] for m in sorted(pair.mismatches, key=lambda m: m[1])] == WrongAt.wrong[:4]
    assert 4 < pair.mismatch_count <= 28 and not pair.mismatch_count_exact
    assert f"At least {pair.mismatch_count} entries differ; showing the first 4 located" in report.message()
    assert f.forwards <= 5 * 4 * 14 + 10


def test_small_pairs_are_still_localised_in_full():
    WrongAt, randn, _ = engine_library()
    WrongAt.wrong = [3]
    report = check_gradients(WrongAt.apply, (randn(8),), fast_mode=True)
    (pair,) = report.pairs
    assert pair.mismatch_count_exact and pair.mismatch_count == 1 and pair.numerical_jacobian is not None


CASE = """
import numpy
import engine


class WrongAt(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        grad = (g * 2).detach().numpy().copy()
        grad[777777] *= 1000.0
        return engine.tensor(grad)


def f(x):
    return WrongAt.apply(x).sum()


inputs = (engine.randn(1_000_000, dtype=engine.float64, requires_grad=True),)
"""


def test_a_million_inputs_through_the_cli(tmp_path):
    path = tmp_path / "big.py"
    path.write_text(textwrap.dedent(CASE))
    done = subprocess.run(
        [sys.executable, "-m", "gradcli", "check", str(path), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 1, done.stderr
    doc = validated(done.stdout)
    (case,) = doc["cases"]
    assert case["mode"] == "fast" and case["localized"]
    (pair,) = case["pairs"]
    assert pair["mismatch_count"] == 1 and pair["mismatch_count_exact"] is False
    assert [m["input_index"] for m in pair["mismatches"]] == [[777777]]
    assert numpy.isclose(pair["mismatches"][0]["analytical"], 2000.0)
