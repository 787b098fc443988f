"""`gradcli anomaly` against scripts that hide errors from it: an error the
script catches, anomaly mode turned off by the script, a backward in another thread, and numpy's
per-thread error state (no RuntimeWarning on stderr)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from json_contract import validated
from paths import ROOT
from typer.testing import CliRunner

from gradcli.cli.app import app

NAN_GRAPH = """
    import engine

    x = engine.tensor([0.0, 4.0], requires_grad=True)
    y = x.sqrt()
"""


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(NAN_GRAPH).lstrip() + textwrap.dedent(body))
    return path


def findings(path: Path) -> tuple[int, list[dict], str]:
    result = CliRunner().invoke(app, ["anomaly", "--json", str(path)])
    assert "internal error" not in result.output, result.output
    document = validated(result.stdout)
    return result.exit_code, document["findings"], result.stdout


def kinds_and_lines(found: list[dict]) -> list[tuple[str, int]]:
    return [(f["kind"], f["location"]["line"]) for f in found if f["severity"] == "error"]


CAUGHT = {
    "try/except around backward": """
        try:
            (y * 0.0).sum().backward()
        except RuntimeError:
            print("caught")
    """,
    "anomaly mode turned off": """
        engine.autograd.set_detect_anomaly(False)
        (y * 0.0).sum().backward()
    """,
    "NaN checks turned off": """
        with engine.autograd.set_detect_anomaly(True, check_nan=False):
            (y * 0.0).sum().backward()
    """,
    "detect_anomaly(check_nan=False) and the error caught": """
        with engine.autograd.detect_anomaly(check_nan=False):
            try:
                (y * 0.0).sum().backward()
            except RuntimeError:
                pass
    """,
    "a backward in a thread": """
        import threading

        worker = threading.Thread(target=lambda: (y * 0.0).sum().backward())
        worker.start()
        worker.join()
    """,
}


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")  # the script's own detect_anomaly
@pytest.mark.parametrize("case", CAUGHT)
def test_a_nan_in_backward_is_found_whatever_the_script_does_to_hide_it(tmp_path, case):
    code, found, _ = findings(script(tmp_path, CAUGHT[case]))
    assert code == 1
    assert kinds_and_lines(found) == [("nan-in-backward", 4)]  # y = x.sqrt()


def test_a_caught_error_outside_backward_is_found_too(tmp_path):
    path = script(
        tmp_path,
        """
        try:
            x.add_(1)
        except RuntimeError as error:
            print("caught", error)
        """,
    )
    code, found, _ = findings(path)
    assert code == 1
    assert kinds_and_lines(found) == [("leaf-inplace", 7)]  # x.add_(1)
    assert "went on after this error" in found[0]["hint"]


def test_the_error_that_ends_the_script_is_reported_once(tmp_path):
    code, found, _ = findings(script(tmp_path, "(y * 0.0).sum().backward()\n"))
    assert code == 1
    assert kinds_and_lines(found) == [("nan-in-backward", 4)]
    assert "went on after this error" not in (found[0]["hint"] or "")


def test_the_script_still_sees_the_anomaly_mode_it_asked_for(tmp_path):
    path = script(
        tmp_path,
        """
        engine.autograd.set_detect_anomaly(False)
        print("enabled:", engine.autograd.is_anomaly_enabled())
        """,
    )
    result = CliRunner().invoke(app, ["anomaly", str(path)])
    assert result.exit_code == 0, result.output
    assert "enabled: False" in result.output


def test_numpy_never_warns_in_a_thread_running_engine_ops(tmp_path):
    path = script(
        tmp_path,
        """
        import threading

        def work():
            z = engine.log(engine.zeros(2)) / engine.zeros(2)
            try:
                (y * 0.0).sum().backward()
            except RuntimeError:
                pass
            print("z:", z.tolist())

        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        """,
    )
    for command in ([str(path)], ["-m", "gradcli", "anomaly", str(path)]):
        done = subprocess.run(
            [sys.executable, *command],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT)},
        )
        assert "z: [-inf, -inf]" in done.stdout, done.stderr
        assert "RuntimeWarning" not in done.stderr
    assert done.returncode == 1 and "nan-in-backward" in done.stdout
