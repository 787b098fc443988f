"""`--check-forward` on engine and torch alike: every op's output is read, whether it records a node
or not (data prepared before anything requires grad, code under no_grad)."""

from __future__ import annotations

import pytest
from cli_runner import run_gradcli_json
from paths import TESTS

SCRIPTS = TESTS / "anomaly_scripts"


@pytest.mark.parametrize(
    "name",
    ["nan_forward_no_grad.py", pytest.param("torch_nan_forward_no_grad.py", marks=pytest.mark.torch_parity)],
)
def test_the_first_op_whose_output_holds_nan_stops_the_script_grad_or_not(name):
    if name.startswith("torch"):
        pytest.importorskip("torch")
    script = SCRIPTS / name
    assert run_gradcli_json("anomaly", "--json", script)[0] == 0  # opt-in
    code, document = run_gradcli_json("anomaly", "--json", "--check-forward", script)
    assert code == document["exit_code"] == 1
    [finding] = document["findings"]
    culprit = next(
        n for n, line in enumerate(script.read_text().splitlines(), 1) if line.endswith("# mark: culprit")
    )
    assert (finding["kind"], finding["location"]["line"]) == ("nan-in-forward", culprit)
    assert finding["details"]["op"] == "log"
    assert finding["message"] == "log produced nan values in forward (1 nan, 0 inf of 4) from finite inputs"
    assert [(s["name"], s["nan"], s["min"], s["max"]) for s in finding["stats"]] == [
        ("output", 1, pytest.approx(0.6931472), pytest.approx(1.3862944)),
        ("input 0", 0, -1.0, 4.0),
    ]
