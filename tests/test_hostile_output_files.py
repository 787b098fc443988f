"""Output files that lose nothing: an output path that is an input, or two outputs on one path, is
refused before anything runs (exit 2 naming both); every output file is written whole or not at all
(a temporary file beside it, renamed over it), keeps the old file's permissions, replaces the file a
link points at, and is never written by a child the user's code forked; --plot's file names are
unique and the same on every run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_runner import gradcli_process as gradcli
from cli_runner import run_gradcli
from json_contract import validated

from gradcli.check.jacobians import NAME_MAX, file_names

ROOT = Path(__file__).resolve().parent.parent

CHECK = (
    "import engine\n\nx = engine.randn(3, dtype=engine.float64, requires_grad=True)\n\n\n"
    "def f(x):\n    return (x * x).sum()\n\n\ninputs = (x,)\n"
)
SCRIPT = "import engine\n\nx = engine.randn(3, requires_grad=True)\n(x * x).sum().backward()\n"
FILES = {"check": CHECK, "graph": CHECK, "anomaly": SCRIPT}


def user_file(tmp_path: Path, command: str, prelude: str = "", name: str = "user_file.py") -> Path:
    path = tmp_path / name
    path.write_text(prelude + FILES[command])
    return path


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------------- an output that is an input


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        ("check", "-o"),
        ("check", "--junitxml"),
        ("check", "--dump"),
        ("check", "--plot"),
        ("graph", "-o"),
        ("anomaly", "-o"),
    ],
)
def test_an_output_path_that_is_an_input_is_refused_and_the_input_kept(tmp_path, command, flag):
    path = user_file(tmp_path, command)
    result = run_gradcli(command, path, flag, path)
    assert result.exit_code == 2, result.output
    assert "an input of this run" in result.output and str(path) in result.output
    assert path.read_text() == FILES[command]


@pytest.mark.parametrize("command", ["check", "graph", "anomaly"])
def test_an_output_through_a_link_or_another_spelling_of_an_input_is_refused(tmp_path, command, monkeypatch):
    path = user_file(tmp_path, command)
    (tmp_path / "link.py").symlink_to(path)
    monkeypatch.chdir(tmp_path)
    for output in ("link.py", "./user_file.py", f"../{tmp_path.name}/user_file.py"):
        result = run_gradcli(command, "user_file.py", "-o", output, "--json")
        assert (
            result.exit_code == 2 and "an input of this run" in validated(result.stdout)["error"]["message"]
        )
    assert path.read_text() == FILES[command] and (tmp_path / "link.py").is_symlink()


def test_the_pyproject_a_check_reads_and_the_files_a_folder_holds_are_inputs(tmp_path):
    project = tmp_path / "pyproject.toml"
    project.write_text("[tool.gradcli]\natol = 1e-5\n")
    folder = tmp_path / "checks"
    folder.mkdir()
    found = user_file(folder, "check", name="check_a.py")
    for argument, output in [(found, project), (folder, project), (folder, found), (f"{found}::f", found)]:
        result = run_gradcli("check", argument, "-o", output)
        assert result.exit_code == 2 and "an input of this run" in result.output, result.output
    assert project.read_text() == "[tool.gradcli]\natol = 1e-5\n" and found.read_text() == CHECK


@pytest.mark.parametrize(
    "flags",
    [
        ["-o", "r.txt", "--junitxml", "r.txt"],
        ["--junitxml", "r.xml", "--dump", "./r.xml"],
        ["-o", "r.txt", "--plot", "r.txt"],
    ],
)
def test_two_outputs_on_one_path_are_refused_before_anything_runs(tmp_path, monkeypatch, flags):
    path = user_file(tmp_path, "check", 'print("ran")\n')
    monkeypatch.chdir(tmp_path)
    result = run_gradcli("check", path, *flags)
    assert result.exit_code == 2 and "are the same file" in result.output, result.output
    assert "ran" not in result.output and not (tmp_path / flags[1]).exists()
    if "--plot" not in flags:  # a folder: /dev/null cannot be one
        shared = [flag if flag.startswith("-") else os.devnull for flag in flags]
        assert run_gradcli("check", path, *shared).exit_code == 0  # /dev/null takes any number of outputs


# ------------------------------------------------------------------- whole or not at all

INTERRUPT = "import os\nimport signal\n\nos.kill(os.getpid(), signal.SIGINT)\n"


@pytest.mark.parametrize("command", ["check", "anomaly"])
def test_a_run_that_stops_leaves_the_old_output_file_and_a_run_that_ends_replaces_it(tmp_path, command):
    target = tmp_path / "report.txt"
    target.write_text("the last report\n")
    target.chmod(0o640)
    (tmp_path / "link.txt").symlink_to(target)
    stops = user_file(tmp_path, command, INTERRUPT, name="stops.py")
    result = gradcli(command, stops.name, "-o", "link.txt", cwd=tmp_path)
    assert result.returncode == 130, result.stderr
    assert target.read_text() == "the last report\n" and leftovers(tmp_path) == []
    ends = user_file(tmp_path, command, name="ends.py")
    result = gradcli(command, ends.name, "-o", "link.txt", cwd=tmp_path)
    assert result.returncode == 0 and "ends.py" in target.read_text(), result.stderr
    assert (tmp_path / "link.txt").is_symlink() and target.stat().st_mode & 0o777 == 0o640
    assert leftovers(tmp_path) == []


FORK = """\
import os

if os.fork() == 0:
    pass  # the child runs on, through gradcli, to its own end
else:
    os.wait()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX")
@pytest.mark.parametrize("command", ["check", "anomaly"])  # both open -o before the user's code runs
def test_a_forked_child_never_writes_the_output_file(tmp_path, command):
    path = user_file(tmp_path, command, FORK)
    result = gradcli(command, path.name, "--json", "-o", "out.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    validated(json.loads((tmp_path / "out.json").read_text()))  # one document: json.loads refuses two
    assert leftovers(tmp_path) == []


# ------------------------------------------------------------------- --plot file names


def test_plot_names_are_unique_for_keys_that_read_alike_and_the_same_on_every_run():
    keys = ["a b/out/x", "a?b/out/x", "a_b/out/x", "linear/out/weight", "c" * 300 + "/out/x", "bell\a/out/x"]
    names = file_names(keys)
    assert len(set(names)) == len(keys) and names == file_names(list(reversed(keys)))[::-1]
    assert names[2] == "a_b-out-x" and names[3] == "linear-out-weight"  # nothing lost: the plain name
    assert all(len(name) <= NAME_MAX + 11 for name in names)


TWO_ALIKE = """\
import engine
import gradcli


class Doubled(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


@gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True), name="a b")
def first(x):
    return Doubled.apply(x).sum()


@gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True), name="a?b")
def second(x):
    return Doubled.apply(x).sum()


@gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True), name="{long}")
def third(x):
    return Doubled.apply(x).sum()
"""


def test_plot_writes_one_png_per_failing_pair_even_when_names_read_alike_or_are_long(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "alike.py"
    path.write_text(TWO_ALIKE.format(long="c" * 300))
    umask = os.umask(0o022)
    try:
        result = run_gradcli("check", path, "--plot", tmp_path / "plots")
    finally:
        os.umask(umask)
    assert result.exit_code == 1, result.output
    pngs = list((tmp_path / "plots").glob("*.png"))
    assert len(pngs) == 3 and leftovers(tmp_path / "plots") == []
    assert all(png.stat().st_mode & 0o777 == 0o644 for png in pngs)  # as open() makes a new file


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_plot_into_a_folder_that_takes_no_files_is_exit_2_naming_it(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "alike.py"
    path.write_text(TWO_ALIKE.format(long="long"))
    result = run_gradcli("check", path, "--plot", "/proc/self")
    assert result.exit_code == 2 and "cannot write --plot /proc/self/" in result.output, result.output
