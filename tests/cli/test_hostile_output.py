"""Hostile output (#18, classes 4 and 5): stdout's contract holds whatever the user's code does.

Real processes and real file descriptors, for every command: with --json, stdout is exactly one
JSON document (the command's, or gradcli.error/1) even when user code prints, writes to
`sys.__stdout__` or to fd 1, runs a subprocess, forks a child that runs on, or prints from an
atexit handler; a reader that closed the pipe ends the command with 141 and nothing else; `-o`
that cannot be written is exit 2 naming the path; output paths are those of the directory
gradcli started in, whatever `os.chdir` the user's code does.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import gradcli_process
from json_contract import validated
from paths import ROOT

#: User code that writes to stdout every way it can; each line it writes says how.
HOSTILE = """\
import atexit, os, subprocess, sys

print("by print")
sys.__stdout__.write("by sys.__stdout__\\n")
sys.__stdout__.flush()
os.write(1, b"by fd 1\\n")
subprocess.run([sys.executable, "-c", "print('by a subprocess')"], check=True)
if hasattr(os, "fork"):
    child = os.fork()
    if child == 0:
        os.write(1, b"by a forked child\\n")  # then runs on, through gradcli, to its own exit
    else:
        os.waitpid(child, 0)


def _late():
    print("by atexit print")
    os.write(1, b"by atexit fd 1\\n")
    for fd in range(3, 256):  # whatever descriptor gradcli left open, none is the document's
        try:
            os.write(fd, b"LEAKED")
        except OSError:
            pass


atexit.register(_late)
"""

WRITERS = ["by print", "by sys.__stdout__", "by fd 1", "by a subprocess", "by atexit print", "by atexit fd 1"]

#: A file each command accepts, after HOSTILE: a case for check, a result for graph, a script for anomaly.
FILES = {
    "check": "import engine\n\nx = engine.randn(3, requires_grad=True)\n\n\ndef f(x):\n"
    '    print("in the case")\n    return (x * x).sum()\n\n\ninputs = (x,)\n',
    "graph": "import engine\n\nx = engine.randn(3, requires_grad=True)\nloss = (x * x).sum()\n",
    "anomaly": "import engine\n\nx = engine.randn(3, requires_grad=True)\n(x * x).sum().backward()\n",
}
COMMANDS = list(FILES)
SCHEMAS = {"check": "gradcli.check/1", "graph": "gradcli.graph/1", "anomaly": "gradcli.anomaly/1"}


gradcli = gradcli_process


def one_document(stdout: str) -> dict:
    """stdout as exactly one JSON document (json.loads refuses anything after it), validated."""
    return validated(json.loads(stdout))


def user_file(folder: Path, command: str, prelude: str = HOSTILE) -> str:
    (folder / f"{command}_file.py").write_text(prelude + FILES[command])
    return f"{command}_file.py"


# ------------------------------------------------------------------- class 4: one document


@pytest.mark.parametrize("flag", [["--json"], ["--format", "json"], ["--format=json"]])
@pytest.mark.parametrize("command", COMMANDS)
def test_json_stdout_is_one_document_whatever_the_users_code_writes(tmp_path, command, flag):
    result = gradcli(command, user_file(tmp_path, command), *flag, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = one_document(result.stdout)
    assert document["schema"] == SCHEMAS[command]
    for writer in WRITERS:  # all of it went to stderr, at the OS level
        assert writer in result.stderr
    if hasattr(os, "fork"):  # the child ran gradcli to its end too: its document went nowhere
        assert "by a forked child" in result.stderr
    assert "LEAKED" not in result.stdout and "internal error" not in result.stderr


def test_user_output_still_goes_to_stdout_without_json(tmp_path):
    result = gradcli("graph", user_file(tmp_path, "graph", 'print("by print")\n'), cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.startswith("by print\n"), result.stderr


@pytest.mark.parametrize(
    ("args", "kind", "words"),
    [
        (["check", "--json", "--order", "5", "FILE"], "usage", "--order"),
        (["check", "--json"], "usage", "Missing argument 'PATH'"),
        (["check", "FILE", "--format", "yaml", "--json"], "usage", "--format"),
        (["graph", "--format=json", "--depth", "0", "FILE"], "usage", "--depth"),
        (["graph", "--json"], "usage", "Missing argument 'FILE'"),
        (["anomaly", "--json", "--lr", "3", "FILE"], "usage", "No such option: --lr"),
        (["graph", "missing.py", "--json"], "load", "file not found"),
        (["graph", "FILE", "--json", "--target", "nothing"], "load", "nothing"),
        (["check", "FILE", "--json", "-k", "not ("], "usage", "-k"),
        (["anomaly", "FILE", "--json", "-o", "no/such/dir/out.json"], "usage", "no/such/dir/out.json"),
    ],
)
def test_errors_with_json_are_one_error_document_with_the_exit_code(tmp_path, args, kind, words):
    command = args[0]
    name = user_file(tmp_path, command, "")
    result = gradcli(*(name if a == "FILE" else a for a in args), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    error = one_document(result.stdout)["error"]
    assert error["code"] == 2 and error["kind"] == kind and words in error["message"]
    if "missing.py" in args:
        assert error["file"] == "missing.py"


def test_a_loading_error_names_the_file_and_line_in_the_error_document(tmp_path):
    (tmp_path / "broken.py").write_text("import engine\n\nx = engine.ones(2)\nraise ValueError('no')\n")
    result = gradcli("graph", "broken.py", "--json", cwd=tmp_path)
    error = one_document(result.stdout)["error"]
    assert (result.returncode, error["kind"], error["file"], error["line"]) == (2, "load", "broken.py", 4)


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CUDA may be available here")
@pytest.mark.parametrize("command", COMMANDS)
def test_cuda_unavailable_with_json_is_a_document_with_exit_2(tmp_path, command):
    result = gradcli(command, user_file(tmp_path, command, ""), "--json", "--device", "cuda", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    document = one_document(result.stdout)
    message = document["error"]["message"] if "error" in document else document["failure"]["message"]
    assert "cuda" in message.lower()


def test_options_after_double_dash_are_the_scripts_not_a_json_request(tmp_path):
    result = gradcli("anomaly", "--lr", "3", user_file(tmp_path, "anomaly", ""), "--", "--json", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == "" and "No such option: --lr" in result.stderr


# ------------------------------------------------------------------- class 5: output failures


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
@pytest.mark.parametrize("command", [*COMMANDS, "schema"])
def test_a_closed_pipe_ends_quietly_with_141(tmp_path, command, json_flag):
    args = (
        ["schema", "check"]
        if command == "schema"
        else [command, user_file(tmp_path, command, ""), *json_flag]
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen(
        [sys.executable, "-m", "gradcli", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()  # the reader is gone before gradcli writes a byte (`| head -0`)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 141, stderr.decode()
    assert (
        b"Traceback" not in stderr and b"internal error" not in stderr and b"Exception ignored" not in stderr
    )


def unwritable_outputs(tmp_path: Path) -> list[str]:
    (tmp_path / "a_file").write_text("")
    paths = [str(tmp_path / "missing" / "out.txt"), str(tmp_path / "a_file" / "out.txt")]
    if Path("/dev/full").exists():
        paths.append("/dev/full")
    return paths


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
@pytest.mark.parametrize("command", COMMANDS)
def test_output_that_cannot_be_written_is_exit_2_naming_the_path(tmp_path, command, json_flag):
    name = user_file(tmp_path, command, "")
    for path in unwritable_outputs(tmp_path):
        result = gradcli(command, name, "-o", path, *json_flag, cwd=tmp_path)
        assert result.returncode == 2 and f"cannot write --output {path}" in result.stderr, result.stderr
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr
        if json_flag:
            assert path in one_document(result.stdout)["error"]["message"]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
@pytest.mark.parametrize("command", COMMANDS)
def test_output_into_a_read_only_folder_is_exit_2_naming_the_path(tmp_path, command):
    name = user_file(tmp_path, command, "")
    folder = tmp_path / "read_only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = gradcli(command, name, "-o", "read_only/out.txt", cwd=tmp_path)
    finally:
        folder.chmod(0o755)
    assert (
        result.returncode == 2
        and "read_only/out.txt" in result.stderr
        and "Permission denied" in result.stderr
    )


CHDIR = "import os\n\nos.makedirs('elsewhere', exist_ok=True)\nos.chdir('elsewhere')\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_output_paths_are_where_gradcli_started_whatever_chdir_the_user_does(tmp_path, command):
    name = user_file(tmp_path, command, CHDIR)
    extra = ["--junitxml", "out.xml", "--dump", "out.npz"] if command == "check" else []
    result = gradcli(command, name, "--json", "-o", "out.json", *extra, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "elsewhere").is_dir() and not list((tmp_path / "elsewhere").iterdir())
    one_document((tmp_path / "out.json").read_text())
    if command == "check":
        assert (tmp_path / "out.xml").read_text().startswith("<?xml") and (tmp_path / "out.npz").is_file()


@pytest.mark.parametrize("command", COMMANDS)
def test_an_interrupt_with_json_is_an_error_document_with_130(tmp_path, command):
    name = user_file(tmp_path, command, "import os\nimport signal\n\nos.kill(os.getpid(), signal.SIGINT)\n")
    result = gradcli(command, name, "--json", cwd=tmp_path)
    assert result.returncode == 130, result.stderr
    error = one_document(result.stdout)["error"]
    assert (error["code"], error["kind"]) == (130, "interrupted")


CLOSES_STDOUT = 'import sys\n\nsys.stdout.close()\nprint("gone", file=sys.stderr)\nraise ValueError("after closing stdout")\n'


@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_that_closes_stdout_then_raises_still_gets_one_document(tmp_path, command):
    result = gradcli(command, user_file(tmp_path, command, CLOSES_STDOUT), "--json", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    document = one_document(result.stdout)
    assert "after closing stdout" in json.dumps(document) and "gone" in result.stderr
    assert "internal error" not in result.stderr and "Fatal Python error" not in result.stderr


@pytest.mark.parametrize("command", ["check", "anomaly"])  # graph reports a loading error on stderr
def test_a_file_that_closes_stdout_then_raises_still_gets_its_report(tmp_path, command):
    result = gradcli(command, user_file(tmp_path, command, CLOSES_STDOUT), cwd=tmp_path)
    assert result.returncode == 2 and "after closing stdout" in result.stdout + result.stderr, result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_output_to_dev_stdout_is_the_document_on_stdout(tmp_path, command):
    if not Path("/dev/stdout").exists():
        pytest.skip("no /dev/stdout")
    name = user_file(tmp_path, command)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    piped = subprocess.run(
        [sys.executable, "-m", "gradcli", command, name, "--json", "-o", "/dev/stdout"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert piped.returncode == 0, piped.stderr
    assert one_document(piped.stdout)["schema"] == SCHEMAS[command]
    with open(tmp_path / "redirected.json", "w") as redirected:  # `> redirected.json`
        done = subprocess.run(
            [sys.executable, "-m", "gradcli", command, name, "--json", "-o", "/dev/stdout"],
            cwd=tmp_path, stdout=redirected, stderr=subprocess.PIPE, text=True, timeout=120, env=env,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert one_document((tmp_path / "redirected.json").read_text())["schema"] == SCHEMAS[command]
