"""The CLI's shared pieces: counted nouns, JSON numbers, exit codes, running a file, the user-frame rule."""

from __future__ import annotations

import sys

from gradcli.render.plurals import noun, plural


def test_plural_counts_and_irregular_forms():
    assert plural(1, "case") == "1 case"
    assert plural(3, "case") == "3 cases"
    assert plural(0, "error") == "0 errors"
    assert plural(1, "leaf", "leaves") == "1 leaf" and plural(2, "leaf", "leaves") == "2 leaves"
    assert plural(12345, "node", thousands=True) == "12,345 nodes"
    assert plural(1000, "node") == "1000 nodes"
    assert noun(1, "was", "were") == "was" and noun(4, "was", "were") == "were"
    assert noun(2, "gradient") == "gradients"


def test_pair_result_carries_every_field_of_the_engines_pair_report():
    import dataclasses

    from engine.autograd.gradcheck.report import PairReport
    from gradcli.check.results import Mismatch, PairResult

    report = PairReport(
        output_index=1,
        input_index=0,
        input_shape=(2,),
        output_shape=(3,),
        jacobian_shape=(3, 2),
        max_abs_err=0.5,
        max_rel_err=float("inf"),
        worst_input_index=(1,),
        worst_output_index=(2,),
        numerical=0.0,
        analytical=0.5,
        mismatches=[((2,), (1,), 0.0, 0.5)],
        passed=False,
        order=2,
    )
    pair = PairResult.named(report, "x", "out1")
    assert (pair.input, pair.output) == ("x", "out1")
    assert pair.mismatches == [Mismatch((2,), (1,), 0.0, 0.5)]
    for f in dataclasses.fields(report):
        if f.name != "mismatches":
            assert getattr(pair, f.name) == getattr(report, f.name), f.name


def test_json_numbers_that_are_not_finite_become_strings_everywhere():
    from gradcli.render.jsonable import finite, finite_all

    assert [finite(v) for v in (float("nan"), float("inf"), float("-inf"))] == ["nan", "inf", "-inf"]
    assert finite(1.5) == 1.5 and finite(None) is None and finite("inf") == "inf" and finite(7) == 7
    nested = {"a": [1.0, (float("inf"), 2)], "b": {"c": float("-inf")}, "d": (3, 4)}
    assert finite_all(nested) == {"a": [1.0, ["inf", 2]], "b": {"c": "-inf"}, "d": [3, 4]}


def test_as_json_is_asdict_in_field_order_without_the_left_out_keys():
    import json
    from dataclasses import dataclass, field

    from gradcli.render.jsonable import as_json

    @dataclass
    class Inner:
        value: float
        source: str = "hidden"

    @dataclass
    class Outer:
        name: str
        shape: tuple
        inner: list[Inner] = field(default_factory=list)
        source: str = "hidden"

    data = as_json(Outer("x", (2, 3), [Inner(float("nan")), Inner(0.5)]), leave_out={"source"})
    assert list(data) == ["name", "shape", "inner"]
    assert data == {"name": "x", "shape": [2, 3], "inner": [{"value": "nan"}, {"value": 0.5}]}
    json.dumps(data, allow_nan=False)  # valid JSON: no NaN literal left


# ------------------------------------------------------------------------ running a file


def test_compile_file_says_why_a_file_cannot_run(tmp_path):
    import pytest

    from gradcli.program.running import CannotRun, compile_file

    def reason(path) -> tuple[str, str, int | None, str | None]:
        with pytest.raises(CannotRun) as caught:
            compile_file(str(path), "script")
        err = caught.value
        return err.reason, err.message, err.line, err.source_line

    assert reason(tmp_path / "gone.py") == ("not-found", "file not found", None, None)
    assert reason(tmp_path) == ("not-a-file", "not a regular Python file (a directory)", None, None)
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\ny = (2,\n")
    kind, message, line, text = reason(broken)
    assert (kind, line, text) == ("syntax-error", 2, "y = (2,\n") and message.startswith("syntax error: ")


def test_compile_file_reads_the_coding_declaration_as_python_does(tmp_path):
    from gradcli.program.running import compile_file

    path = tmp_path / "latin.py"
    path.write_bytes("# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1"))
    user = compile_file(str(path), "check file")
    assert user.lines[1] == "name = 'café'"
    namespace: dict = {}
    exec(user.code, namespace)
    assert namespace["name"] == "café"


def test_running_sets_path_argv_and_main_for_the_block_only(tmp_path):

    from gradcli.program.running import compile_file, main_module, running

    path = tmp_path / "script.py"
    path.write_text("import sys\nseen = (sys.argv[:], sys.path[0], __name__)\n")
    user = compile_file(str(path), "script")
    argv, main, first = sys.argv, sys.modules["__main__"], sys.path[0]
    with main_module(user.abspath) as module, running(user, seed=0, argv=["script.py", "-v"]):
        exec(user.code, module.__dict__)
        assert sys.modules["__main__"] is module
    assert module.seen == (["script.py", "-v"], str(tmp_path), "__main__")
    assert sys.argv is argv and sys.modules["__main__"] is main and sys.path[0] == first
    assert str(tmp_path) not in sys.path


# ---------------------------------------------------------------------------- exit codes


def _ended(body, **options) -> tuple[int | None, str]:
    """(exit code, what was said on stderr) when `body` runs under exit_codes; code None: no exit."""
    import io

    from rich.console import Console
    from typer import Exit

    from gradcli.cli.exits import exit_codes

    stream = io.StringIO()
    err = Console(file=stream, width=200, markup=False, highlight=False)
    try:
        with exit_codes(err, **{"debug": False, **options}):
            body()
    except Exit as done:
        return done.exit_code, stream.getvalue()
    return None, stream.getvalue()


def _raise(exc: BaseException):
    def body():
        raise exc

    return body


def test_exit_codes_for_each_way_a_command_ends():
    from typer import Exit

    from gradcli.cli.exits import UsageError
    from gradcli.program.running import LoadError

    assert _ended(lambda: None) == (None, "")
    assert _ended(_raise(Exit(1))) == (1, "")
    assert _ended(_raise(UsageError("--eps must be positive"))) == (2, "error: --eps must be positive\n")
    assert _ended(_raise(LoadError("file not found", "gone.py"))) == (2, "error: gone.py: file not found\n")
    assert _ended(_raise(KeyboardInterrupt())) == (130, "interrupted\n")
    code, said = _ended(_raise(ValueError("boom")))
    assert code == 3 and said == "internal error: ValueError: boom (run with --debug for the traceback)\n"
    code, said = _ended(_raise(ValueError("boom")), debug=True)
    assert code == 3 and said.startswith("Traceback (most recent call last):") and "internal error" in said


def test_exit_codes_treats_the_commands_own_usage_errors_as_usage_errors():
    class OutputError(Exception):
        pass

    assert _ended(_raise(OutputError("cannot write")), usage=(OutputError,)) == (2, "error: cannot write\n")
    assert _ended(_raise(OutputError("cannot write")))[0] == 3


# ------------------------------------------------------------------------ the user's frames


def test_the_engine_names_gradcli_only_once_gradcli_runs_user_code(tmp_path):
    """One rule for the user's frames: the engine's, which learns gradcli's folder from gradcli."""
    import subprocess

    script = tmp_path / "user.py"
    script.write_text("x = 1\n")
    probe = (
        "from engine.autograd import anomaly\n"
        "from gradcli.program import running\n"
        "print(anomaly.is_internal_file(running.__file__))\n"
        f"user = running.compile_file({str(script)!r}, 'script')\n"
        "with running.running(user, seed=None):\n"
        "    print(anomaly.is_internal_file(running.__file__), anomaly.is_internal_file(user.abspath))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "False"]


def test_a_function_class_is_the_users_by_the_engines_rule(tmp_path, monkeypatch):
    import importlib.util

    import engine
    from gradcli.check.replay.failure_replay import _defined_by_user

    path = tmp_path / "mine.py"
    path.write_text("from engine.autograd import Function\n\nclass Mine(Function):\n    pass\n")
    spec = importlib.util.spec_from_file_location("mine_for_the_test", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "mine_for_the_test", module)
    spec.loader.exec_module(module)
    assert _defined_by_user(module.Mine)
    assert not _defined_by_user(engine.autograd.Function)
    monkeypatch.setattr(engine.autograd.anomaly, "is_internal_file", lambda filename: True)
    assert not _defined_by_user(module.Mine)  # decided by that rule, not by the module's name


# ------------------------------------------------------------------- classifying an error


def _classified(err: BaseException):
    """The finding gradcli anomaly makes of `err`, raised here (not in the engine)."""
    from gradcli.anomaly import Instrument, classify
    from gradcli.program.sites import Sites

    try:
        raise err
    except RuntimeError as raised:
        sites = Sites(__file__, "test_cli_shared.py")
        return classify(raised, Instrument(sites), sites, None)


def _error(message: str, **attributes) -> RuntimeError:
    err = RuntimeError(message)
    for name, value in attributes.items():
        setattr(err, name, value)
    return err


def test_errors_are_classified_by_the_engines_attribute_not_their_words():
    import engine
    from engine.autograd.node import FREED_MESSAGE, LEAF_MESSAGE

    leaf = engine.ones(2, requires_grad=True)
    assert _classified(_error("reworded", autograd_kind="freed")).kind == "backward-twice"
    finding = _classified(_error("reworded", autograd_kind="view-of-leaf-inplace", tensor=leaf))
    assert finding.kind == "leaf-inplace" and finding.details["through_view"] is True
    assert (
        _classified(_error("reworded", autograd_kind="leaf-inplace", tensor=leaf)).details["through_view"]
        is False
    )
    changed = _classified(_error("reworded", autograd_kind="no-grad-view-changed"))
    assert (
        changed.kind == "no-grad-view-inplace" and "its storage was then changed in place" in changed.message
    )
    direct = _classified(_error("reworded", autograd_kind="no-grad-view-inplace"))
    assert direct.kind == "no-grad-view-inplace" and "whether the change should be tracked" in direct.message
    assert _classified(_error("reworded", autograd_kind="implicit-grad", tensor=leaf)).kind == (
        "implicit-grad-nonscalar"
    )
    # The engine's words without its attribute, raised by user code: not about autograd.
    assert _classified(_error(FREED_MESSAGE)) is None
    assert _classified(_error(LEAF_MESSAGE)) is None
    assert _classified(_error("grad can be implicitly created only for scalar outputs")) is None
