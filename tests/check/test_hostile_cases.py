"""Hostile check files: wrong verdicts, bad case options and seeds,
objects that raise on attribute access, and state that one file leaves for the next.

Each test runs the real CLI (typer's CliRunner) on files written to tmp_path and asserts on
the exit code and the words of the report: a user's mistake is exit 2 naming file:line, a
wrong gradient a FAIL (exit 1) with its reason, never a pass and never exit 3.
"""

import re
import textwrap
from pathlib import Path

import pytest
from cli_runner import run_gradcli
from json_contract import validated
from typer.testing import CliRunner

from gradcli.cli.app import app

X64 = "engine.randn(3, dtype=engine.float64, requires_grad=True)"


def run(*args: str):
    return run_gradcli("check", *args)


def write(folder: Path, source: str, name: str = "check_me.py") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


# ------------------------------------------------------------------ case options, names, --seed


@pytest.mark.parametrize(
    "option",
    ['eps=float("nan")', 'eps=float("inf")', "eps=0", "eps=-1e-6", 'atol=float("nan")', 'rtol=float("inf")',
     "atol=-1", "rtol=-0.5", "nondet_tol=-1", 'nondet_tol=float("nan")'],
)  # fmt: skip
def test_bad_case_options_are_exit_2_at_their_line(tmp_path, option):
    path = write(
        tmp_path,
        f"""
        import engine, gradcli

        @gradcli.case({X64}, {option})
        def double(x):
            return x * 2
        """,
    )
    result = run(path)
    key = option.split("=")[0]
    assert result.exit_code == 2, result.output
    assert f"{path}:3: exception while loading: ValueError: gradcli.case({key}=...) must be" in result.stderr


@pytest.mark.parametrize("flag", ["--eps", "--atol", "--rtol", "--nondet-tol"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_non_finite_tolerances_on_the_command_line_are_usage_errors(tmp_path, flag, value):
    path = write(tmp_path, f"import engine\nf = lambda x: x * 2\ninputs = ({X64},)\n")
    result = run(path, flag, value)
    assert result.exit_code == 2 and flag in result.output, result.output


@pytest.mark.parametrize("name", ["3", "None.__class__", "('a', 'b')"])
def test_a_case_name_that_is_not_a_string_is_exit_2_at_its_line(tmp_path, name):
    path = write(
        tmp_path,
        f"""
        import engine, gradcli

        @gradcli.case({X64}, name={name})
        def double(x):
            return x * 2
        """,
    )
    result = run(path)
    assert result.exit_code == 2
    assert (
        f"{path}:3: exception while loading: TypeError: gradcli.case(name=...) must be a string"
        in result.stderr
    )


def test_seed_takes_every_integer_torch_takes_negative_ones_as_torch_maps_them(tmp_path):
    path = write(
        tmp_path,
        f"""
        import engine
        print("drawn", engine.randn(3).tolist())
        f = lambda x: x * 2
        inputs = ({X64},)
        """,
    )

    def drawn(seed: int) -> str:
        result = run(path, f"--seed={seed}")
        assert result.exit_code == 0, result.output
        return next(line for line in result.output.splitlines() if line.startswith("drawn"))

    assert drawn(-1) == drawn(2**64 - 1) != drawn(1)  # torch: -1 is the seed 2**64 - 1
    assert drawn(-(2**63)) == drawn(2**63)
    for seed in (2**64, -(2**63) - 1):
        result = run(path, f"--seed={seed}")
        assert result.exit_code == 2 and "Invalid value for '--seed'" in result.output, result.output


def test_engine_manual_seed_maps_negative_seeds_as_torch_does(torch):
    import engine

    for seed in (-1, -(2**63), 2**64 - 1, 7):
        assert torch.manual_seed(seed).initial_seed() == engine.backend.seed_value(seed)
    for seed in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            torch.manual_seed(seed)
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            engine.manual_seed(seed)


def test_json_of_a_bad_option_names_the_line(tmp_path):
    path = write(
        tmp_path,
        f"import engine, gradcli\n@gradcli.case({X64}, atol=float('nan'))\ndef g(x):\n    return x\n",
    )
    result = run(path, "--json")
    doc = validated(result.stdout)
    assert result.exit_code == 2 and doc["errors"][0]["line"] == 2


# ------------------------------------------------------------------ objects whose attributes raise

RAISING_OBJECTS = """
class Raises:
    def __getattr__(self, name):
        raise RuntimeError("no attribute " + name)

    @property
    def __class__(self):
        raise RuntimeError("no class")

    def __call__(self, x):
        return x * 2

weird = Raises()
"""


def test_top_level_objects_whose_attribute_access_raises_are_skipped(tmp_path):
    path = write(
        tmp_path,
        f"""
        import engine, gradcli
        {textwrap.indent(RAISING_OBJECTS, "        ").strip()}
        lin = engine.nn.Linear(3, 3, dtype=engine.float64)

        @gradcli.case({X64})
        def uses_it(x):
            return lin(weird(x))

        f = weird  # a raising object as the top-level `f` is called, not probed
        inputs = ({X64},)
        """,
    )
    result = run(path)
    assert result.exit_code == 0 and "2 passed" in result.output, result.output
    graph = CliRunner().invoke(app, ["graph", str(path)])
    assert graph.exit_code == 0 and "internal error" not in graph.output, graph.output


def test_a_model_whose_attributes_raise_is_exit_2_not_3(tmp_path):
    path = write(tmp_path, RAISING_OBJECTS + f"import engine\nmodel = weird\ninputs = ({X64},)\n")
    result = run(path)
    assert (
        result.exit_code == 2
        and "`model` must be a callable object with a .parameters() method" in result.stderr
    )


# ------------------------------------------------------------------ float32 and tied models pass

MODELS = {
    "float32": """
        model = {nn}.Sequential({nn}.Linear(3, 4), {nn}.Tanh(), {nn}.Linear(4, 2))
        inputs = ({lib}.randn(5, 3),)  # float32, no requires_grad: upcast with the parameters
        """,
    "tied": """
        class Tied({nn}.Module):
            def __init__(self):
                super().__init__()
                self.a = {nn}.Linear(3, 3)
                self.b = {nn}.Linear(3, 3)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b({lib}.tanh(self.a(x)))

        model = Tied()
        inputs = ({lib}.randn(4, 3, requires_grad=True),)
        """,
}


@pytest.mark.parametrize("library", ["engine", "torch"])
@pytest.mark.parametrize("kind", list(MODELS))
def test_float32_and_tied_weight_models_pass_when_correct(tmp_path, library, kind):
    if library == "torch":
        pytest.importorskip("torch")
    source = f"import {library}\n" + textwrap.dedent(MODELS[kind]).format(nn=f"{library}.nn", lib=library)
    path = write(tmp_path, source)
    result = run(path, "--json")
    doc = validated(result.stdout)
    assert result.exit_code == 0, result.output
    checked = [pair["input"] for pair in doc["cases"][0]["pairs"] if pair["mode"] == "rev"]
    if kind == "tied":  # the shared weight is checked once, under its first name
        assert checked == ["x", "model.a.weight", "model.a.bias", "model.b.bias"]
    else:
        assert checked == ["model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"]


# ------------------------------------------------------------------ no state leaks between files

LEAKS = {
    "engine": """
        import os
        import engine
        engine.set_grad_enabled(False)
        engine.set_default_dtype(engine.float64)
        engine.autograd.set_detect_anomaly(True)
        os.chdir(os.path.dirname(os.getcwd()))
        """,
    "torch": """
        import os
        import torch
        torch.set_grad_enabled(False)
        torch.set_default_dtype(torch.float64)
        torch.autograd.set_detect_anomaly(True)
        torch.set_default_device("meta")
        os.chdir(os.path.dirname(os.getcwd()))
        """,
}
CLEAN = {
    "engine": """
        import os
        import engine
        from engine.autograd import anomaly
        print("state", engine.is_grad_enabled(), engine.get_default_dtype(), engine.get_default_device(),
              anomaly.is_anomaly_enabled(), os.getcwd(), engine.randn(2).tolist())
        f = lambda x: x.sin()
        inputs = (engine.randn(3, dtype=engine.float64, requires_grad=True),)
        """,
    "torch": """
        import os
        import torch
        print("state", torch.is_grad_enabled(), torch.get_default_dtype(), torch.get_default_device(),
              torch.is_anomaly_enabled(), os.getcwd(), torch.randn(2).tolist())
        f = lambda x: x.sin()
        inputs = (torch.randn(3, dtype=torch.float64, requires_grad=True),)
        """,
}


@pytest.mark.parametrize("library", ["engine", "torch"])
def test_each_file_starts_from_the_same_state_whatever_the_previous_file_did(tmp_path, monkeypatch, library):
    if library == "torch":
        pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    write(tmp_path, CLEAN[library], "check_1_clean.py")
    write(tmp_path, CLEAN[library] + LEAKS[library], "check_2_leaks.py")  # its own case fails: grad is off
    write(tmp_path, CLEAN[library], "check_3_clean.py")
    result = run(tmp_path, "--seed", "3")
    states = [line for line in result.stdout.splitlines() if line.startswith("state")]
    assert len(states) == 3 and states[0] == states[1] == states[2], result.stdout
    assert f"{tmp_path} " in states[0] and " True " in states[0], states[0]  # grad mode on, the start folder
    assert result.exit_code == 1 and "2 passed, 1 failed" in result.stdout, result.stdout
    assert re.search(r"FAILED \S*check_2_leaks\.py::f", result.stdout), result.stdout


@pytest.mark.parametrize("library", ["engine", "torch"])
def test_a_later_files_top_level_does_not_change_an_earlier_files_case(tmp_path, library):
    if library == "torch":
        pytest.importorskip("torch")
    first = write(tmp_path, CLEAN[library], "first.py")
    turns_grad_off = f"import {library}\n{library}.set_grad_enabled(False)\n"
    second = write(tmp_path, turns_grad_off + textwrap.dedent(CLEAN[library]), "second.py")
    result = run(first, second, "--json")
    doc = validated(result.stdout)
    verdicts = {(Path(c["file"]).name, c["passed"]) for c in doc["cases"]}
    assert verdicts == {("first.py", True), ("second.py", False)}, result.stdout


# ------------------------------------------------------------------ wrong verdicts: each a FAIL with its reason


def failure_of(path: Path, case: str = "f") -> str:
    result = run(path)
    assert result.exit_code == 1 and "passed" not in result.stdout.splitlines()[-1], result.output
    report = result.stdout.split(f"FAILED {path}::{case} ", 1)[1].split("\nFAILED ", 1)[0]
    return " ".join(report.split())  # the report wraps at the console's width


def test_a_function_whose_number_of_outputs_changes_fails_saying_so(tmp_path):
    path = write(
        tmp_path,
        f"""
        import engine
        calls = [0]

        def f(x):
            calls[0] += 1
            return (x * 2, x * 3) if calls[0] == 1 else (x * 2,)

        inputs = ({X64},)
        """,
    )
    report = failure_of(path)
    assert report.startswith("NONDETERMINISTIC FORWARD")
    assert (
        "called again on the same inputs and random state, the forward returned 2 outputs, then 1" in report
    )


@pytest.mark.parametrize("where", ["backward", "forward"])
def test_sys_exit_0_in_user_code_fails_the_case_at_its_line(tmp_path, where):
    path = write(
        tmp_path,
        f"""
        import sys
        import engine
        calls = [0]

        class Exits(engine.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                calls[0] += 1
                if calls[0] > 1 and {where == "forward"}:
                    sys.exit(0)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                sys.exit(0)

        f = Exits.apply
        inputs = ({X64},)
        """,
    )
    line = 10 if where == "forward" else 15
    assert re.search(rf"raised SystemExit: 0 \(at \S*{path.name}:{line}\)", failure_of(path))


MARK_DIRTY = """
import engine, gradcli

X = lambda: (engine.randn(3, dtype=engine.float64, requires_grad=True),)


class NotReturned(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Doubles(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g  # wrong: the derivative of 2x is 2


@gradcli.case(X)
def not_returned(x):
    return NotReturned.apply(x * 1)


@gradcli.case(X)
def dirty_leaf(x):
    return Doubles.apply(x)


@gradcli.case(X)
def dirty_wrong(x):
    return Doubles.apply(x * 1)
"""


def test_custom_functions_that_misuse_mark_dirty_fail_with_torchs_messages(tmp_path):
    path = write(tmp_path, MARK_DIRTY)
    result = run(path)
    assert result.exit_code == 1 and "3 failed" in result.stdout
    assert (
        "Some elements marked as dirty during the forward method were not returned as output."
        in failure_of(path, "not_returned")
    )
    assert "a leaf Variable that requires grad has been used in an in-place" in failure_of(path, "dirty_leaf")
    assert "x: max abs err 1.00e+00" in failure_of(path, "dirty_wrong")


def test_an_output_whose_grad_fn_property_raises_fails_with_the_reason(tmp_path):
    path = write(
        tmp_path,
        f"""
        import engine

        class Hostile(engine.Tensor):
            __slots__ = ()

            @property
            def grad_fn(self):
                raise ValueError("no grad_fn here")

        def f(x):
            y = x * 2
            y.__class__ = Hostile
            return y

        inputs = ({X64},)
        """,
    )
    assert re.search(rf"raised ValueError: no grad_fn here \(at \S*{path.name}:8\)", failure_of(path))
