"""Verdict classes: a drifting forward is RANDOM / NONDETERMINISTIC FORWARD with its cause, never a
kink or a pass; noise is a pass with a note; a wrong gradient is a BUG that disagrees at every step;
each class is in the text, the JSON and JUnit."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_gradcli_json
from paths import ROOT
from typer.testing import CliRunner

import engine
from engine.autograd import check_gradients, gradcheck
from engine.autograd.gradcheck import GradcheckError
from gradcli.cli.app import app

try:  # at collection, as every torch test module does: an in-process pytester run drops the modules
    import torch  # it imported, and torch loaded a second time in one process crashes it
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def x64(*values):
    return engine.tensor(list(values), dtype=engine.float64, requires_grad=True)


# ------------------------------------------------------------------------ the engine's checker


def test_a_forward_that_draws_random_numbers_is_random_and_names_the_draw():
    report = check_gradients(
        lambda x: x.sin() + 1e-3 * engine.randn(3, dtype=engine.float64), (x64(1, 2, 3),)
    )
    assert not report.passed and report.problem_kinds == ["RANDOM FORWARD"]
    assert report.pairs == []  # no Jacobian: finite differences of a random function mean nothing
    drift = report.forward_drift
    assert drift.kind == "random" and drift.changed == 3 and drift.total == 3
    (call,) = drift.random_calls
    assert call.function == "randn" and call.file == __file__


def test_a_forward_that_draws_a_bernoulli_mask_in_place_names_the_draw():
    report = check_gradients(
        lambda x: (x * engine.empty(64, 3, dtype=engine.float64).bernoulli_(0.5)).sum(0), (x64(1, 2, 3),)
    )
    assert report.problem_kinds == ["RANDOM FORWARD"]
    (call,) = report.forward_drift.random_calls
    assert call.function == "bernoulli_" and call.file == __file__


def test_a_forward_that_counts_its_calls_is_nondeterministic():
    calls = [0]

    def f(x):
        calls[0] += 1
        return x * calls[0]

    report = check_gradients(f, (x64(1, 2, 3),))
    assert report.problem_kinds == ["NONDETERMINISTIC FORWARD"] and report.forward_drift.kind == "state"
    assert (
        "called again on the same inputs and random state, 3 of 3 entries of output 0 changed"
        in (report.problems[0])
    )


def test_a_forward_that_writes_to_its_input_is_nondeterministic_and_the_input_is_restored():
    def f(x):
        y = x * 2
        x.data.add_(1e-3)
        return y

    x = x64(1, 2, 3)
    report = check_gradients(f, (x,))
    assert report.problem_kinds == ["NONDETERMINISTIC FORWARD"]
    assert report.forward_drift.kind == "input" and report.forward_drift.inputs_changed == [0]
    # the probe puts the input back as the caller gave it
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0, 3.0])


def test_a_deterministic_forward_is_not_flagged_and_random_draws_outside_it_are_fine():
    w = engine.randn(3, dtype=engine.float64)
    report = check_gradients(lambda x: (x * w).sin(), (x64(1, 2, 3),))
    assert report.passed and report.forward_drift is None and report.problem_kinds == []


def test_gradcheck_keeps_torchs_behaviour_on_a_random_forward():
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(lambda x: x + 1e-3 * engine.randn(3, dtype=engine.float64), (x64(1, 2, 3),))


def test_rounding_noise_is_a_pass_with_the_step_that_agrees():
    report = check_gradients(lambda x: 1e8 + 0.5 * x, (x64(1, 2, 3),))
    (pair,) = report.pairs
    assert report.passed and pair.passed and pair.mismatch_count == 0
    assert pair.noise and all(entry[5].startswith("eps=") for entry in pair.noise)
    assert all(abs(entry[4] - 0.5) < 1e-3 for entry in pair.noise)


def test_truncation_noise_is_a_pass_by_richardson_extrapolation():
    report = check_gradients(lambda x: (1e5 * x).sin() / 1e5, (x64(0.1, 0.2, 0.3),))
    (pair,) = report.pairs
    assert report.passed and pair.noise and {entry[5] for entry in pair.noise} == {"Richardson extrapolation"}


class WrongSin(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos() * 1.01


def test_a_wrong_gradient_is_a_bug_tried_at_every_estimate():
    report = check_gradients(WrongSin.apply, (x64(1, 2, 3),))
    (pair,) = report.pairs
    assert not pair.passed and not pair.noise and not pair.nondifferentiable
    assert pair.estimates_tried == ["Richardson extrapolation", "eps=1e-05", "eps=0.0001", "eps=0.001"]


class NoisyBackward(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2 + 1e-3 * engine.randn(*g.shape, dtype=g.dtype)


def test_a_backward_that_differs_between_runs_is_nondeterministic_backward():
    report = check_gradients(NoisyBackward.apply, (x64(1, 2, 3),))
    assert "NONDETERMINISTIC BACKWARD" in report.problem_kinds


# --------------------------------------------------------------------------------- the CLI


def write(tmp_path: Path, source: str, name: str = "check_me.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def check(path: Path, *args: str) -> tuple[int, dict]:
    return run_gradcli_json("check", path, "--json", *args)


def line_of(path: Path, text: str) -> int:
    """The number of the first line of `path` that contains `text`."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def case_named(document: dict, name: str) -> dict:
    return next(c for c in document["cases"] if c["name"] == name)


ENGINE_DROPOUT = """
    import engine
    import engine.nn as nn

    model = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.1), nn.Tanh())
    inputs = (engine.randn(4, 6, dtype=engine.float64, requires_grad=True),)
"""


def test_a_dropout_model_in_training_mode_is_random_forward_naming_the_module(tmp_path):
    code, doc = check(write(tmp_path, ENGINE_DROPOUT))
    case = doc["cases"][0]
    assert code == 1 and case["verdict"] == "RANDOM FORWARD" and case["pairs"] == []
    assert case["reason"].startswith("model.1 (Dropout(p=0.1, inplace=False)) is in training mode")
    assert "model.eval()" in case["reason"] and not case["warnings"]
    assert "called at" not in case["reason"]  # the model form has no line of the user's inside the forward


def test_the_same_model_in_eval_mode_passes(tmp_path):
    code, doc = check(write(tmp_path, textwrap.dedent(ENGINE_DROPOUT) + "model.eval()\n"))
    assert code == 0 and doc["cases"][0]["verdict"] == "PASS"


def test_text_report_names_the_class_the_cause_and_its_line(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        import gradcli

        @gradcli.case(lambda: (engine.randn(5, dtype=engine.float64, requires_grad=True),))
        def noisy(x):
            return x.sin() + 1e-3 * engine.randn(5, dtype=engine.float64)
        """,
    )
    result = CliRunner().invoke(app, ["check", str(path)])
    out = result.output
    assert result.exit_code == 1 and "NONDIFF" not in out and "KINK" not in out and "WARNING" not in out
    assert f"FAILED {path}::noisy RANDOM FORWARD" in out
    assert f"why: `randn` at {path}:6 draws new random numbers on every call" in " ".join(out.split())
    assert "6 | return x.sin() + 1e-3 * engine.randn(5, dtype=engine.float64)" in out


def test_state_attributes_and_inputs_changed_are_named_at_their_line(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        import engine.nn as nn
        import gradcli

        calls = 0

        @gradcli.case(lambda: (engine.randn(3, dtype=engine.float64, requires_grad=True),))
        def counting(x):
            global calls
            calls += 1
            return x * calls

        class Drifting(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = 1.0

            def forward(self, x):
                self.scale *= 1.5
                return x * self.scale

        drifting = Drifting()

        @gradcli.case(lambda: (engine.randn(3, dtype=engine.float64, requires_grad=True),))
        def attribute(x):
            return drifting(x)

        @gradcli.case(lambda: (engine.randn(3, dtype=engine.float64, requires_grad=True),))
        def writes_input(x):
            y = x * 2
            x.data.add_(1e-3)
            return y.sin()
        """,
    )
    code, doc = check(path)
    assert code == 1
    counting, attribute, writes = (case_named(doc, n) for n in ("counting", "attribute", "writes_input"))
    assert counting["verdict"] == "NONDETERMINISTIC FORWARD"
    at = f"at {path}:{line_of(path, 'calls += 1')}"
    assert counting["reason"].startswith(f"global `calls` changes on every call, {at}")
    at = f"at {path}:{line_of(path, 'self.scale *= 1.5')}"
    assert attribute["reason"].startswith(f"attribute `self.scale` changes on every call, {at}")
    at = f"at {path}:{line_of(path, 'x.data.add_')}"
    assert writes["reason"].startswith(f"the forward writes to its input `x` in place {at}")
    assert "ctx.mark_dirty" in writes["reason"]


def test_numpys_random_state_drawn_in_the_forward_is_random_forward(tmp_path):
    path = write(
        tmp_path,
        """
        import numpy
        import engine
        f = lambda x: x + engine.tensor(numpy.random.randn(3) * 1e-3)
        inputs = (engine.randn(3, dtype=engine.float64, requires_grad=True),)
        """,
    )
    code, doc = check(path)
    case = doc["cases"][0]
    assert code == 1 and case["verdict"] == "RANDOM FORWARD" and "numpy.random" in case["reason"]


def test_noise_passes_with_a_note_and_a_bug_fails_in_junit_with_its_class(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        import gradcli

        @gradcli.case(lambda: (engine.tensor([1.0, 2.0], dtype=engine.float64, requires_grad=True),))
        def offset(x):
            return 1e8 + 0.5 * x

        class Wrong(engine.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3

        @gradcli.case(lambda: (engine.tensor([1.0, 2.0], dtype=engine.float64, requires_grad=True),))
        def wrong(x):
            return Wrong.apply(x)
        """,
    )
    junit = tmp_path / "report.xml"
    code, doc = check(path, "--junitxml", str(junit))
    offset, wrong = case_named(doc, "offset"), case_named(doc, "wrong")
    assert code == 1
    assert offset["passed"] and offset["verdict"] == "NOISE" and offset["pairs"][0]["verdict"] == "NOISE"
    assert "agree with eps=" in offset["reason"] and offset["notes"] and not offset["warnings"]
    assert not wrong["passed"] and wrong["verdict"] == "BUG" and wrong["pairs"][0]["verdict"] == "BUG"
    assert "Richardson extrapolation, so it is not the finite difference's noise" in wrong["reason"]
    failures = ET.parse(junit).getroot().findall(".//failure")
    assert [(f.get("type"), f.get("message")[:5]) for f in failures] == [("BUG", "BUG: ")]
    text = CliRunner().invoke(app, ["check", str(path)]).output
    assert f"NOTE {path}::offset" in text and "1 passed, 1 failed" in text


# -------------------------------------------------------------------------- torch's own code

TORCH_RANDOM = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import gradcli

    torch.manual_seed(0)
    block = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.1,
                                       batch_first=True).double()

    @gradcli.case(lambda: (torch.randn(2, 3, 8, dtype=torch.float64, requires_grad=True),))
    def transformer(x):
        return block(x)

    @gradcli.case(lambda: (torch.randn(4, dtype=torch.float64, requires_grad=True),))
    def functional(x):
        return F.dropout(x.sin(), 0.2)

    @gradcli.case(lambda: (torch.randn(4, dtype=torch.float64, requires_grad=True),))
    def noise(x):
        return x + 1e-3 * torch.randn(4, dtype=torch.float64)

    @gradcli.case(lambda: (torch.randn(4, dtype=torch.float64, requires_grad=True),))
    def evaluated(x):
        block.eval()
        try:
            return block(x.reshape(1, 1, 4).repeat(1, 2, 2))
        finally:
            block.train()
"""


@needs_torch
def test_torch_dropout_and_random_draws_are_random_forward_with_their_cause(tmp_path):
    path = write(tmp_path, TORCH_RANDOM)
    code, doc = check(path)
    transformer, functional, noise, evaluated = (
        case_named(doc, n) for n in ("transformer", "functional", "noise", "evaluated")
    )
    assert code == 1
    assert transformer["verdict"] == "RANDOM FORWARD" and not transformer["warnings"], transformer["reason"]
    assert transformer["reason"].startswith("block.")
    assert "block.dropout1 (Dropout(p=0.1, inplace=False))" in transformer["reason"]
    assert "are in training mode: their dropout draws a new mask" in transformer["reason"]
    assert functional["verdict"] == "RANDOM FORWARD"
    at = f"at {path}:{line_of(path, 'F.dropout(')}"
    assert functional["reason"].startswith(f"`dropout` {at} draws a new mask on every call")
    at = f"at {path}:{line_of(path, '1e-3 * torch.randn')}"
    assert noise["reason"].startswith(f"`randn` {at} draws new random numbers")
    assert evaluated["verdict"] == "PASS", evaluated["reason"]


@needs_torch
def test_torch_forward_writing_its_input_is_named(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        def f(x):
            y = x * 2
            x.data.mul_(1.001)
            return y
        inputs = (torch.randn(3, dtype=torch.float64, requires_grad=True),)
        """,
    )
    code, doc = check(path)
    case = doc["cases"][0]
    assert code == 1 and case["verdict"] == "NONDETERMINISTIC FORWARD"
    at = f"at {path}:{line_of(path, 'x.data.mul_')}"
    assert case["reason"].startswith(f"the forward writes to its input `x` in place {at}")


def test_json_verdicts_are_the_documented_classes(tmp_path):
    code, doc = check(write(tmp_path, ENGINE_DROPOUT))
    schema = json.loads((ROOT / "gradcli/schemas/check.json").read_text())
    assert doc["cases"][0]["verdict"] in schema["$defs"]["case_class"]["enum"]


def test_a_bug_from_a_cut_graph_says_where_the_gradient_was_lost(tmp_path):
    path = write(
        tmp_path,
        """
        import engine

        def f(x):
            y = engine.tensor(x.detach().numpy() ** 2)
            return x.sin() + y

        inputs = (engine.randn(4, dtype=engine.float64, requires_grad=True),)
        """,
    )
    code, doc = check(path)
    case = doc["cases"][0]
    at = f"{path}:{line_of(path, '.numpy()')}"
    assert code == 1 and case["verdict"] == "BUG"
    assert case["reason"].startswith(f"x's gradient is cut at {at}: `.detach().numpy()`")


def test_a_counter_kept_in_a_list_is_named_at_its_line(tmp_path):
    path = write(
        tmp_path,
        """
        import engine

        calls = [0]

        def f(x):
            calls[0] += 1
            return x * calls[0]

        inputs = (engine.randn(3, dtype=engine.float64, requires_grad=True),)
        """,
    )
    code, doc = check(path)
    case = doc["cases"][0]
    at = f"at {path}:{line_of(path, 'calls[0] += 1')}"
    assert code == 1 and case["verdict"] == "NONDETERMINISTIC FORWARD"
    assert case["reason"].startswith(f"global `calls` changes on every call, {at}")
