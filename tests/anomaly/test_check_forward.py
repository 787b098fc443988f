"""`--check-forward` on engine and torch alike (the `script` fixture): every op's output is read,
whether it records a node or not (data prepared before anything requires grad, code under no_grad)."""

from __future__ import annotations

import pytest
from cli_runner import run_gradcli_json


def test_the_first_op_whose_output_holds_nan_stops_the_script_grad_or_not(script):
    path = script("torch_nan_forward_no_grad.py")
    assert run_gradcli_json("anomaly", "--json", path)[0] == 0  # opt-in
    code, document = run_gradcli_json("anomaly", "--json", "--check-forward", path)
    assert code == document["exit_code"] == 1
    [finding] = document["findings"]
    culprit = next(
        n for n, line in enumerate(path.read_text().splitlines(), 1) if line.endswith("# mark: culprit")
    )
    assert (finding["kind"], finding["location"]["line"]) == ("nan-in-forward", culprit)
    assert finding["details"]["op"] == "log"
    assert finding["message"] == (
        "log produced nan values in forward (1 nan, 0 inf of 4) from finite inputs: "
        "log's input is negative there: log of a negative number is nan"
    )
    assert finding["details"]["cause"] == "log-of-negative"
    assert [(s["name"], s["nan"], s["min"], s["max"]) for s in finding["stats"]] == [
        ("output", 1, pytest.approx(0.6931472), pytest.approx(1.3862944)),
        ("input 0", 0, -1.0, 4.0),
    ]


def test_a_minus_inf_attention_mask_is_meant_and_passes(script):
    code, document = run_gradcli_json(
        "anomaly", "--json", "--check-forward", script("torch_attention_mask.py")
    )
    assert (code, document["findings"]) == (0, [])


def test_a_row_masked_everywhere_is_the_nan_it_makes(script, tmp_path):
    """An infinity meant is not an error; the NaN it leads to is, at the op that made it."""
    path = script("torch_attention_mask.py")
    masked_everywhere = tmp_path / f"all_{path.name}"
    masked_everywhere.write_text(path.read_text().replace('"--mask-everything" in sys.argv', "True"))
    code, document = run_gradcli_json("anomaly", "--json", "--check-forward", masked_everywhere)
    assert code == 1
    [finding] = document["findings"]
    culprit = next(
        n
        for n, line in enumerate(masked_everywhere.read_text().splitlines(), 1)
        if line.endswith("# mark: culprit")
    )
    assert (finding["kind"], finding["location"]["line"], finding["details"]["op"]) == (
        "nan-in-forward",
        culprit,
        "softmax",
    )
