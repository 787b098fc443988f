"""The CLI's basics: --version, -h, shell completion, Examples in each command's help, the output
options every command shares (--format, --json, -o), and how `gradcli anomaly` splits its own
options from the script's (`--`).

In-process through typer's CliRunner; the version and completion run the real entry point.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from cli_runner import run_gradcli
from json_contract import validated
from paths import ROOT, TESTS

SCRIPTS = TESTS / "anomaly_scripts"
COMMANDS = ("check", "graph", "anomaly", "schema")


def run(*args: str):
    result = run_gradcli(*args, traceback=True, internal=True)  # help texts name both
    assert result.exit_code != 3, result.output  # not a bug of gradcli
    return result


#: The console script `gradcli` (gradcli.cli:main) as pip installs it: its name is sys.argv[0].
CONSOLE_SCRIPT = "import sys; from gradcli.cli import main; sys.argv[0] = 'gradcli'; main()"


def entry_point(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", CONSOLE_SCRIPT, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


# ------------------------------------------------------------------ version, help, completion


def test_version_is_the_installed_distributions():
    done = entry_point("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"gradcli {version('gradcli')}\n"


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_h_is_help_everywhere_and_each_command_shows_examples(command):
    words = [command] if command else []
    short, long = run(*words, "-h"), run(*words, "--help")
    assert short.exit_code == long.exit_code == 0
    assert short.stdout == long.stdout and "Usage:" in short.stdout
    if command:
        examples = short.stdout.split("Examples:")[1]
        invocations = re.findall(rf"gradcli {command} \S+", examples)
        assert len(invocations) >= 2, examples


@pytest.mark.parametrize("command", ["check", "graph", "anomaly"])
def test_the_examples_in_help_run_as_shown(command, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    examples = run(command, "-h").stdout.split("Examples:")[1]
    lines = [line.strip() for line in examples.splitlines() if line.strip().startswith(f"gradcli {command} ")]
    assert len(lines) >= 3
    for line in lines:
        words = shlex.split(line)[1:]
        for flag in ("-o", "--junitxml", "--dump", "--plot"):  # written to tmp_path, not the checkout
            if flag in words:
                at = words.index(flag) + 1
                words[at] = str(tmp_path / words[at])
        result = run(*words)
        assert result.exit_code in (0, 1), (line, result.output)  # 1: examples/buggy.py, examples/script.py
        for flag in ("-o", "--junitxml"):
            if flag in words:
                assert Path(words[words.index(flag) + 1]).stat().st_size > 0, line


def _complete(shell: str, env: dict[str, str]) -> list[str]:
    """What gradcli answers the completion script of `shell` (typer's protocol), one item a line."""
    asked = {"_GRADCLI_COMPLETE": f"complete_{shell}", **env}
    answer = subprocess.run(
        [sys.executable, "-c", CONSOLE_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), **asked},
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr
    return answer.stdout.splitlines()


def _bash(line: str) -> list[str]:
    words = line.split(" ")
    return _complete("bash", {"COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)})


def _powershell(line: str) -> list[str]:
    word = line.split(" ")[-1]
    return _complete("powershell", {"_TYPER_COMPLETE_ARGS": line, "_TYPER_COMPLETE_WORD_TO_COMPLETE": word})


def test_shell_completion_is_typers_and_completes_commands_and_options():
    assert "--install-completion [SHELL]" in run("--help").stdout
    done = entry_point("--show-completion", "bash")
    assert done.returncode == 0, done.stderr
    assert "_GRADCLI_COMPLETE=complete_bash" in done.stdout
    assert done.stdout.rstrip().endswith("complete -o default -F _gradcli_completion gradcli")
    assert _bash("gradcli graph --show") == ["--show-saved"]
    assert _bash("gradcli gr") == ["graph"]


@pytest.mark.parametrize("shell", ["powershell", "pwsh"])
def test_powershell_completion_script_and_answers(shell):
    done = entry_point("--show-completion", shell)
    assert done.returncode == 0, done.stderr
    assert "Register-ArgumentCompleter -Native -CommandName gradcli" in done.stdout
    assert '$Env:_GRADCLI_COMPLETE = "complete_powershell"' in done.stdout
    # PowerShell reads "value:::help" lines
    assert [line.split(":::")[0] for line in _powershell("gradcli graph --show")] == ["--show-saved"]
    assert [line.split(":::")[0] for line in _powershell("gradcli sch")] == ["schema"]


@pytest.mark.parametrize("complete", [_bash, _powershell], ids=["bash", "powershell"])
def test_path_arguments_complete_file_names(complete):
    names = lambda line: [item.split(":::")[0] for item in complete(line)]
    assert names("gradcli check exa") == ["examples/"]
    assert "examples/model.py" in names("gradcli check examples/mo")
    assert "examples/expr.py" in names("gradcli graph examples/ex")
    assert "examples/script.py" in names("gradcli anomaly examples/scr")
    assert "examples/model.py" in names("gradcli check examples/buggy.py examples/mo")  # every PATH
    assert not [name for name in names("gradcli check examples/") if "/." in name]  # hidden: asked with "."


def test_install_completion_writes_the_script_once_and_sources_it(tmp_path):
    for shell in ([], ["bash"]):  # no SHELL: the current one (shellingham; $SHELL where it finds none)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path), "SHELL": "/bin/bash"}
        done = subprocess.run(
            [sys.executable, "-c", CONSOLE_SCRIPT, "--install-completion", *shell],
            cwd=ROOT, capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    script = tmp_path / ".bash_completions" / "gradcli.sh"
    assert f"bash completion installed in {script}" in done.stdout
    assert "_GRADCLI_COMPLETE=complete_bash" in script.read_text()
    assert (tmp_path / ".bashrc").read_text().count(f"source '{script}'") == 1
    unknown = entry_point("--show-completion", "tcsh")
    assert unknown.returncode == 2 and "'tcsh' is not one of" in unknown.stderr


# ----------------------------------------------------------------------- output options


def test_check_format_json_json_and_output_file_write_the_same_document(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    by_format = run("check", "examples/buggy.py", "--format", "json")
    by_alias = run("check", "examples/buggy.py", "--json")
    to_file = run("check", "examples/buggy.py", "--format", "json", "-o", tmp_path / "report.json")
    assert by_format.exit_code == by_alias.exit_code == to_file.exit_code == 1
    assert to_file.stdout == ""
    documents = [
        validated(by_format.stdout),
        validated(by_alias.stdout),
        validated((tmp_path / "report.json").read_text()),
    ]
    for document in documents:
        del document["summary"]["elapsed"]
        for case in document["cases"]:
            del case["elapsed"]
    assert documents[0] == documents[1] == documents[2]
    assert documents[0]["cases"][0]["name"] == "linear" and documents[0]["passed"] is False


def test_check_text_report_goes_to_the_output_file(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    shown = run("check", "examples/buggy.py", "--format", "text")
    written = run("check", "examples/buggy.py", "--output", tmp_path / "report.txt")
    assert shown.exit_code == written.exit_code == 1 and written.stdout == ""
    text = (tmp_path / "report.txt").read_text()
    assert "FAILED examples/buggy.py::linear" in text and "FAILED examples/buggy.py::linear" in shown.stdout
    assert "\x1b[" not in text  # a file gets plain text


def test_an_output_file_that_cannot_be_written_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    missing = tmp_path / "no" / "such" / "dir" / "out.json"
    for command in (
        ["check", "examples/model.py"],
        ["anomaly", "examples/script.py"],
        ["graph", "examples/expr.py"],
    ):
        result = run(*command, "--json", "-o", missing)
        assert result.exit_code == 2, result.output
        assert f"cannot write --output {missing}" in result.stderr


def test_graph_text_is_the_tree_and_json_is_an_alias(monkeypatch):
    monkeypatch.chdir(ROOT)
    default, text, tree = (
        run("graph", "examples/expr.py"),
        run("graph", "examples/expr.py", "--format", "text"),
        run("graph", "examples/expr.py", "--format", "tree"),
    )
    assert default.stdout == text.stdout == tree.stdout and default.stdout.startswith(
        "examples/expr.py: backward graph"
    )
    assert validated(run("graph", "examples/expr.py", "--json").stdout) == validated(
        run("graph", "examples/expr.py", "--format", "json").stdout
    )


def test_anomaly_writes_its_report_or_document_to_the_output_file(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = run("anomaly", "examples/script.py", "--format", "json", "-o", tmp_path / "a.json")
    assert result.exit_code == 1 and result.stdout == ""
    document = validated((tmp_path / "a.json").read_text())
    assert [f["kind"] for f in document["findings"]] == ["inplace-modified-saved"]
    result = run("anomaly", "examples/script.py", "-o", tmp_path / "a.txt")
    assert result.exit_code == 1 and result.stdout == ""
    assert "ERROR inplace-modified-saved" in (tmp_path / "a.txt").read_text()


# ------------------------------------------------------------- anomaly: gradcli's options or the script's


def test_an_unknown_option_before_double_dash_is_a_usage_error_that_says_where_it_goes():
    script = SCRIPTS / "argv_main.py"
    result = run("anomaly", script, "a", "--lr", "3")
    assert result.exit_code == 2
    assert "No such option: --lr" in result.output
    assert "gradcli anomaly SCRIPT -- --lr ..." in " ".join(result.output.replace("│", " ").split())
    assert "ARGV" not in result.output  # the script never ran
    misspelt = run("anomaly", script, "--jsn")
    assert misspelt.exit_code == 2 and "did you mean --json?" in misspelt.output


def test_after_double_dash_every_argument_goes_to_the_script():
    script = SCRIPTS / "argv_main.py"
    result = run("anomaly", script, "a", "--", "--lr", "3", "--json", "-o", "x")
    assert result.exit_code == 0, result.output
    assert "ARGV ['a', '--lr', '3', '--json', '-o', 'x']" in result.stdout
    document = validated(run("anomaly", "--json", script, "b", "--", "--strict").stdout)
    assert document["argv"] == [str(script), "b", "--strict"] and document["strict"] is False
