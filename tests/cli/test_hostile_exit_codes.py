"""A user's mistake is never "internal error" (exit 3): a pyproject.toml that is not UTF-8 or too deep,
a lazy module's uninitialised parameters, --plot where files cannot go or without a working
matplotlib, names and paths that are not UTF-8 or hold control characters (JUnit XML stays XML), a
Graphviz that writes bytes that are not UTF-8, a -k expression nested thousands deep, shell
completion with an unusable HOME or request; --timeout bounds an inputs factory, `FILE::` names no
case, and a local torch.py is named as the cause at the user's import line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_runner import gradcli_process as gradcli
from cli_runner import run_gradcli
from json_contract import validated
from paths import ROOT

CHECK = (
    "import engine\n\nx = engine.randn(3, dtype=engine.float64, requires_grad=True)\n\n\n"
    "def f(x):\n    return (x * x).sum()\n\n\ninputs = (x,)\n"
)


# ------------------------------------------------------------------- pyproject.toml


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"[tool.gradcli]\natol = 1e-5 \xff\n", "not UTF-8"),
        (b"a = " + b"[" * 3000 + b"]" * 3000 + b"\n", "nested too deeply"),
    ],
)
@pytest.mark.parametrize("named", ["file", "folder"])
def test_a_pyproject_that_cannot_be_parsed_is_a_loading_error_naming_it(tmp_path, content, words, named):
    (tmp_path / "pyproject.toml").write_bytes(content)
    (tmp_path / "check_a.py").write_text(CHECK)
    result = run_gradcli("check", tmp_path / "check_a.py" if named == "file" else tmp_path)
    assert result.exit_code == 2, result.output
    assert "pyproject.toml" in result.output and words in result.output


# ------------------------------------------------------------------- lazy modules

LAZY_MODEL = "import torch\n\nmodel = torch.nn.LazyLinear(2)\ninputs = (torch.randn(3, 4),)\n"
LAZY_MODULES = """\
import torch

import gradcli

net = torch.nn.LazyLinear(2)


@gradcli.case(torch.randn(3, 4, requires_grad=True), modules=(net,))
def f(x):
    return net(x).sum()
"""


@pytest.mark.parametrize("source", [LAZY_MODEL, LAZY_MODULES], ids=["model", "modules"])
def test_uninitialised_parameters_of_a_lazy_module_are_a_loading_error(tmp_path, source):
    pytest.importorskip("torch")
    path = tmp_path / "lazy.py"
    path.write_text(source)
    result = run_gradcli("check", path)
    assert result.exit_code == 2, result.output
    assert (
        "weight, " in result.output and "not initialized" in result.output and "LazyLinear" in result.output
    )


# ------------------------------------------------------------------- --plot

BROKEN_MATPLOTLIB = "raise RuntimeError('this matplotlib is broken')\n"


def test_a_matplotlib_that_fails_to_import_is_exit_2(tmp_path):
    fake = tmp_path / "fake" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(BROKEN_MATPLOTLIB)
    (tmp_path / "c.py").write_text(CHECK)
    result = gradcli(
        "check",
        "c.py",
        "--plot",
        "plots",
        cwd=tmp_path,
        env={"PYTHONPATH": f"{fake.parent}{os.pathsep}{ROOT}"},
    )
    assert result.returncode == 2, result.stderr
    assert "matplotlib" in result.stderr and "this matplotlib is broken" in result.stderr
    assert not (tmp_path / "plots").exists()


# ------------------------------------------------------------------- JUnit XML and names

CONTROL = """\
import engine
import gradcli


@gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True), name="bell\\a{tail}")
def bell(x):
    return x.sum()


@gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True))
def colours(x):
    raise ValueError("\\x1b[31mred\\x1b[0m")
"""


def junit(path: Path) -> ET.Element:
    return ET.parse(path).getroot()  # fails on anything that is not XML


def test_junit_xml_escapes_control_characters_as_pytest_does(tmp_path):
    (tmp_path / "control.py").write_text(CONTROL.format(tail=""))
    (tmp_path / "nul.py").write_text('raise ValueError("a \\x00 in a load error")\n')
    result = run_gradcli(
        "check", tmp_path / "control.py", tmp_path / "nul.py", "--junitxml", tmp_path / "j.xml"
    )
    assert result.exit_code == 2, result.output
    text = ET.tostring(junit(tmp_path / "j.xml"), encoding="unicode")
    assert 'name="bell#x07"' in text and "#x1B[31mred#x1B[0m" in text and "a #x00 in a load error" in text


def test_names_and_paths_that_are_not_utf8_are_written_not_internal_errors(tmp_path):
    path = tmp_path / "\udcffcheck.py"  # a file name of bytes that are not UTF-8, as os.fsdecode reads it
    path.write_text(CONTROL.format(tail="\\udcff"))
    result = run_gradcli("check", path, "--junitxml", tmp_path / "\udcffj.xml", "-o", tmp_path / "report.txt")
    assert result.exit_code == 1, result.output
    text = ET.tostring(junit(tmp_path / "\udcffj.xml"), encoding="unicode")
    assert "bell#x07#xDCFF" in text and "#xDCFFcheck.py" in text
    assert b"\xffcheck.py" in (tmp_path / "report.txt").read_bytes()  # the name's own bytes
    for command in ("graph", "anomaly"):
        result = run_gradcli(command, path, "-o", tmp_path / f"{command}.txt")
        assert result.exit_code in (0, 2), result.output


# ------------------------------------------------------------------- Graphviz

FAKE_DOT = "#!/bin/sh\ncat > /dev/null\nprintf '<svg>\\377</svg>'\n"


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script as dot")
@pytest.mark.parametrize("fmt", ["svg", "html"])
def test_a_dot_that_writes_bytes_that_are_not_utf8_is_exit_2(tmp_path, monkeypatch, fmt):
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "dot").write_text(FAKE_DOT)
    (bin_folder / "dot").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    (tmp_path / "g.py").write_text(
        "import engine\n\nx = engine.randn(3, requires_grad=True)\nloss = x.sum()\n"
    )
    result = run_gradcli("graph", tmp_path / "g.py", "--format", fmt, "-o", tmp_path / f"g.{fmt}")
    assert result.exit_code == 2 and "not UTF-8" in result.output, result.output
    assert not (tmp_path / f"g.{fmt}").exists()


# ------------------------------------------------------------------- -k


def test_k_nested_thousands_deep_is_a_usage_error_and_long_not_chains_work(tmp_path):
    path = tmp_path / "c.py"
    path.write_text(CHECK)
    result = run_gradcli("check", path, "-k", "(" * 3000 + "f" + ")" * 3000)
    assert result.exit_code == 2 and "nested deeper than" in result.output, result.output
    assert run_gradcli("check", path, "-k", "not " * 4000 + "f").exit_code == 0
    assert run_gradcli("check", path, "-k", "not " * 4001 + "f").exit_code == 5  # every case deselected
    assert run_gradcli("check", path, "-k", "(" * 50 + "f" + ")" * 50).exit_code == 0


# ------------------------------------------------------------------- shell completion

CONSOLE_SCRIPT = "import sys; from gradcli.cli import main; sys.argv[0] = 'gradcli'; main()"


def console(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CONSOLE_SCRIPT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_installing_completion_where_home_cannot_take_it_is_exit_2(tmp_path, shell):
    home = tmp_path / "home"
    home.write_text("a file, not a folder")
    done = console({"HOME": str(home)}, "--install-completion", shell)
    assert done.returncode == 2 and "cannot install" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("env", [{"COMP_CWORD": "abc"}, {}], ids=["not-a-number", "missing"])
def test_a_completion_request_gradcli_cannot_read_is_exit_2(env):
    done = console({"_GRADCLI_COMPLETE": "complete_bash", "COMP_WORDS": "gradcli ch", **env})
    assert done.returncode == 2 and "completion request" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------------- limits

SLOW_INPUTS = """\
import time

import engine
import gradcli


def slow_inputs():
    time.sleep(5)
    return (engine.randn(3, requires_grad=True),)


@gradcli.case(slow_inputs)
def f(x):
    return x.sum()
"""


def test_timeout_bounds_an_inputs_factory(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text(SLOW_INPUTS)
    started = time.monotonic()
    code, document = validated_run("check", path, "--timeout", "0.5", "--json")
    assert time.monotonic() - started < 4.5
    assert code == 2 and document["errors"][0]["line"] == 8
    assert "building the inputs of case 'f' timed out after 0.5 s" in document["errors"][0]["message"]


def validated_run(*args) -> tuple[int, dict]:
    result = run_gradcli(*args)
    return result.exit_code, validated(result.stdout)


def test_a_node_id_with_no_case_after_the_colons_is_a_usage_error(tmp_path):
    path = tmp_path / "c.py"
    path.write_text(CHECK)
    code, document = validated_run("check", f"{path}::", "--json")
    assert (
        code == 2 and document["error"]["kind"] == "usage" and "names no case" in document["error"]["message"]
    )


@pytest.mark.parametrize("command", ["check", "graph", "anomaly"])
def test_a_local_torch_py_is_named_at_the_users_import_line(tmp_path, command):
    (tmp_path / "torch.py").write_text("")
    (tmp_path / "uses_torch.py").write_text(
        "import torch\n\nx = torch.randn(3, requires_grad=True)\nloss = x.sum()\n"
    )
    result = gradcli(command, "uses_torch.py", cwd=tmp_path)
    output = " ".join((result.stdout + result.stderr).replace("|", " ").split())
    assert result.returncode == 2, result.stderr
    assert "uses_torch.py:1" in output and "the local torch.py shadows the torch package" in output
    assert "circular import" not in output
