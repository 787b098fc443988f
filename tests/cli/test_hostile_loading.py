"""Hostile user files keep the exit-code contract on every command.

Exceptions that cannot be printed, files too deep to compile, SystemExit / GeneratorExit /
KeyboardInterrupt from user code, BOMs and coding cookies, FIFOs, devices, directories and binary
files: each gives its exit code and message, never a traceback, and (check, anomaly) one JSON
document with --json. Files that could make gradcli read forever run in a subprocess with a timeout.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_runner import run_gradcli
from json_contract import validated
from paths import ROOT

COMMANDS = ["check", "graph", "anomaly"]
X = "x = engine.randn(3, dtype=engine.float64, requires_grad=True)\n"

BAD_STR = {
    "raises": "    def __str__(self):\n        raise ValueError('no')\n",
    "non-str": "    def __str__(self):\n        return 5\n",
}


def write(tmp_path: Path, source: str, name: str = "hostile.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def run(command: str, path: Path, *extra: str):
    return run_gradcli(command, path, *extra)


def run_all(command: str, path: Path, code: int, *messages: str) -> None:
    """Plain text and, where the command has one for errors, the JSON document: same exit code."""
    result = run(command, path)
    assert result.exit_code == code, result.output
    for message in messages:
        assert flat(message) in flat(result.output), result.output
    if command != "graph" and code != 130:  # graph's errors come as JSON
        result = run(command, path, "--json")
        assert result.exit_code == code, result.output
        assert validated(result.stdout)["exit_code"] == code


def flat(text: str) -> str:
    """Text without the anomaly report's box and wrapping."""
    return " ".join(text.replace("|", " ").split())


def subprocess_run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "gradcli", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def bad_exception(kind: str) -> str:
    return f"import engine\nclass Bad(Exception):\n{BAD_STR[kind]}\n"


# ----------------------------------------------------------------------------- 1. unprintable


@pytest.mark.parametrize("kind", sorted(BAD_STR))
@pytest.mark.parametrize("command", COMMANDS)
def test_unprintable_exception_while_loading_is_exit_2_at_its_line(tmp_path, command, kind):
    path = write(tmp_path, bad_exception(kind) + X + "raise Bad()\n")
    line = len(path.read_text().splitlines())
    run_all(command, path, 2, f"{path}:{line}", "Bad: <unprintable Bad object>", "raise Bad()")


@pytest.mark.parametrize("kind", sorted(BAD_STR))
def test_unprintable_exception_in_a_case_fails_it(tmp_path, kind):
    path = write(tmp_path, bad_exception(kind) + "def f(x):\n    raise Bad()\n" + X + "inputs = (x,)\n")
    run_all("check", path, 1, "forward raised Bad: <unprintable Bad object>", "raise Bad()")
    run_all("graph", path, 2, "running case 'f': Bad: <unprintable Bad object>", "raise Bad()")


BACKWARD = """
class F(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        {body}
"""


def backward_raising(body: str, prefix: str = "import engine\n") -> str:
    return prefix + BACKWARD.format(body=body)


@pytest.mark.parametrize("kind", sorted(BAD_STR))
def test_unprintable_exception_in_a_backward(tmp_path, kind):
    source = backward_raising("raise Bad()", bad_exception(kind)) + X
    check = write(tmp_path, source + "def f(x):\n    return F.apply(x)\ninputs = (x,)\n")
    run_all("check", check, 1, "Bad: <unprintable Bad object>", "raise Bad()")
    script = write(tmp_path, source + "F.apply(x).sum().backward()\n", "script.py")
    run_all("anomaly", script, 1, "the backward of FBackward raised Bad: <unprintable Bad object>")


# ----------------------------------------------------------------------------- 2. too deep to compile


@pytest.mark.parametrize("command", COMMANDS)
def test_files_too_deep_for_python_are_loading_errors(tmp_path, command):
    nested = write(tmp_path, "x = " + "-(" * 10_000 + "1" + ")" * 10_000 + "\n", "nested.py")
    run_all(command, nested, 2, str(nested), "too many nested parentheses")
    chain = write(tmp_path, "x = " + " + ".join(["1"] * 100_000) + "\n", "chain.py")
    run_all(command, chain, 2, str(chain), "Python cannot compile it: RecursionError")


def test_a_too_deep_script_is_reported_as_too_complex(tmp_path):
    chain = write(tmp_path, "x = " + " + ".join(["1"] * 100_000) + "\n")
    failure = validated(run("anomaly", chain, "--json").stdout)["failure"]
    assert failure["reason"] == "too-complex"


# ----------------------------------------------------------------------------- 3. exits and interrupts


@pytest.mark.parametrize("call", ["sys.exit(0)", "sys.exit(3)", "sys.exit()", "raise GeneratorExit()"])
def test_exits_in_a_case_fail_it_at_their_line(tmp_path, call):
    path = write(tmp_path, f"import sys\nimport engine\ndef f(x):\n    {call}\n{X}inputs = (x,)\n")
    name = "GeneratorExit" if "Generator" in call else "SystemExit"
    run_all("check", path, 1, f"forward raised {name}", f"(at {path}:4)", f"4 | {call}")
    run_all("graph", path, 2, f"{path}:4: exception while running case 'f': {name}")


@pytest.mark.parametrize("call", ["sys.exit(0)", "sys.exit(3)"])
def test_exit_in_a_backward_fails_the_case(tmp_path, call):
    source = backward_raising(call, "import sys\nimport engine\n") + X
    path = write(tmp_path, source + "def f(x):\n    return F.apply(x)\ninputs = (x,)\n")
    run_all("check", path, 1, f"backward of output 0 raised SystemExit: {call[9]}", f"(at {path}:11)")


def test_exit_at_the_top_level_of_a_check_file_is_a_loading_error(tmp_path):
    path = write(tmp_path, "import sys\nx = 1\nsys.exit(0)\n")
    run_all("check", path, 2, f"{path}:3: exception while loading: SystemExit: 0")


@pytest.mark.parametrize(
    ("status", "code", "message"), [("0", 2, "no target found"), ("3", 2, "SystemExit: 3")]
)
def test_graph_runs_a_file_as_python_does_so_an_exit_with_status_0_ends_it(tmp_path, status, code, message):
    path = write(tmp_path, f"import sys\nx = 1\nsys.exit({status})\n")
    run_all("graph", path, code, message)


@pytest.mark.parametrize(("status", "code"), [("0", 0), ("", 0), ("4", 2)])
def test_a_scripts_own_exit_is_its_exit_under_anomaly(tmp_path, status, code):
    path = write(tmp_path, f"import sys\nimport engine\n{X}sys.exit({status})\n")
    run_all("anomaly", path, code, *(["the script exited with status 4"] if code else []))


@pytest.mark.parametrize("command", COMMANDS)
def test_ctrl_c_while_loading(tmp_path, command):
    path = write(tmp_path, f"import engine\n{X}raise KeyboardInterrupt\n")
    verb = "running" if command == "anomaly" else "loading"
    run_all(command, path, 130, f"interrupted while {verb} {path}")


@pytest.mark.parametrize(
    ("command", "where"),
    [
        ("check", "forward"),
        ("check", "backward"),
        ("check", "inputs"),
        ("graph", "forward"),
        ("graph", "inputs"),
    ],
)  # graph runs no backward
def test_ctrl_c_in_a_case_names_it(tmp_path, command, where):
    body = {"forward": "raise KeyboardInterrupt", "backward": "return F.apply(x)", "inputs": "return x"}[
        where
    ]
    inputs = (
        "inputs = lambda: (_ for _ in ()).throw(KeyboardInterrupt())"
        if where == "inputs"
        else "inputs = (x,)"
    )
    source = backward_raising("raise KeyboardInterrupt") + X + f"def f(x):\n    {body}\n{inputs}\n"
    path = write(tmp_path, source)
    run_all(command, path, 130, f"interrupted while running {path}::f")


ENTRIES = {
    "console script": "from gradcli.cli.entry import main\nmain()",
    "python -m gradcli": "import runpy\nrunpy.run_module('gradcli', run_name='__main__')",
}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("delay", [0.02, 0.1, 0.3, 0.6, 1.0])
def test_ctrl_c_at_any_moment_exits_130_quietly(tmp_path, delay, entry):
    """From the entry point's first line on (the `gradcli` package itself, imported first, is
    the one window left): importing the CLI, loading the file, running it."""
    path = write(tmp_path, f"import time\nimport engine\n{X}time.sleep(30)\n")
    harness = (
        "import os, signal, sys, threading\nimport gradcli.cli.entry\n"
        f"sys.argv = ['gradcli', 'check', {str(path)!r}]\n"
        f"threading.Timer({delay}, os.kill, (os.getpid(), signal.SIGINT)).start()\n" + ENTRIES[entry]
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", harness], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr + done.stdout and "ignored" not in done.stderr


# ----------------------------------------------------------------------------- 6. what a file is

CASE = "f = lambda x: x * 2\ninputs = (engine.randn(3, dtype=engine.float64, requires_grad=True),)\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_bom_and_coding_cookie_load_as_python_loads_them(tmp_path, command):
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfimport engine\n" + CASE.encode())
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\nimport engine\nname = 'caf\xe9'\n" + CASE.encode())
    for path in (bom, latin):
        assert (
            subprocess.run(
                [sys.executable, "-c", f"compile(open({str(path)!r}, 'rb').read(), 'f', 'exec')"]
            ).returncode
            == 0
        )
        run_all(command, path, 0)


def test_a_coding_cookie_is_honoured_in_the_line_shown(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nimport engine\nraise ValueError('caf\xe9')\n")
    run_all("check", path, 2, "ValueError: café", "3 | raise ValueError('café')")


@pytest.mark.parametrize("command", COMMANDS)
def test_binary_files_are_not_python(tmp_path, command):
    path = tmp_path / "binary.py"
    path.write_bytes(b"x = 1\n\x00\x01\x02\xff\xfe")
    run_all(command, path, 2, "not a regular Python file (binary: it contains null bytes)")


@pytest.mark.parametrize(
    ("command", "kind"),
    [(c, k) for k in ("fifo", "device", "directory") for c in COMMANDS if (c, k) != ("check", "directory")],
)  # check searches a directory for check files
def test_special_files_are_refused_without_reading_them(tmp_path, command, kind):
    if kind == "fifo":
        path = tmp_path / "pipe.py"
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    else:
        path = tmp_path / "folder.py"
        path.mkdir()
    what = {"fifo": "a FIFO", "device": "a device", "directory": "a directory"}[kind]
    for extra in ([], ["--json"]):
        done = subprocess_run(command, str(path), *extra, timeout=120)  # the bug this catches: a hang
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback (most recent call last)" not in done.stdout + done.stderr
        if extra and command != "graph":
            assert validated(json.loads(done.stdout))["exit_code"] == 2
        else:
            assert f"not a regular Python file ({what})" in done.stdout + done.stderr


if not hasattr(os, "mkfifo") or not hasattr(signal, "SIGINT"):  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX only")
