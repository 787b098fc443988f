"""`gradcli diff --against`: a check file's cases against themselves in float64, or run as torch."""

from __future__ import annotations

import pytest
from cli_runner import run_gradcli_json
from paths import TESTS

FILES = TESTS / "diff" / "files"


def diff_json(*args: object) -> tuple[int, dict]:
    """`gradcli diff ARGS --json`: the exit code and the document, validated against its schema."""
    return run_gradcli_json("diff", *args, "--json")


def test_float32_against_float64_finds_the_unstable_op():
    code, document = diff_json(FILES / "unstable.py", "--against", "float64")
    assert code == 1
    (found,) = document["pairs"]
    assert (found["reference_label"], found["candidate_label"]) == ("float64", "float32")
    forward = found["forward"]
    assert forward["candidate"]["name"] == "ExpBackward0"  # 2.7e43 in float64, inf in float32
    assert forward["difference"]["at"] == [2] and forward["difference"]["candidate"] == "inf"
    assert {r["name"]: r["status"] for r in found["gradients"]} == {"x": "differ"}


@pytest.mark.usefixtures("torch")
@pytest.mark.parametrize("case", ["run_mlp", "run_cnn", "run_block"])
def test_engine_models_agree_with_torch(case):
    code, document = diff_json(f"{FILES / 'models.py'}::{case}", "--against", "torch")
    assert code == 0, document
    (found,) = document["pairs"]
    assert (found["reference_label"], found["candidate_label"]) == ("engine", "torch")
    if case != "run_block":  # the engine's MultiheadAttention records other views than torch's
        assert found["nodes"][0] == found["nodes"][1] and not found["structure"]
    assert found["forward"] is None and found["backward"] is None
    assert len(found["gradients"]) > 2 and {r["status"] for r in found["gradients"]} == {"agree"}


@pytest.mark.usefixtures("torch")
@pytest.mark.parametrize("case", ["run_mlp", "run_cnn"])
def test_torch_models_run_on_the_engine_agree(tmp_path, case):
    """A torch file against torch: run on the engine (its imports of torch read as engine), the
    engine's side the reference, as for an engine file."""
    twin = tmp_path / "torch_models.py"
    twin.write_text((FILES / "models.py").read_text().replace("engine", "torch"))
    code, document = diff_json(f"{twin}::{case}", "--against", "torch")
    assert code == 0, document
    (found,) = document["pairs"]
    assert (found["reference_label"], found["candidate_label"]) == ("engine", "torch")
    assert found["nodes"][0] == found["nodes"][1] and not found["structure"]
    assert len(found["gradients"]) > 2 and {r["status"] for r in found["gradients"]} == {"agree"}


@pytest.mark.usefixtures("torch")
def test_a_torch_case_under_torch_compile_agrees_with_eager(monkeypatch):
    from gradcli.diff import loading

    monkeypatch.setitem(loading.COMPILE_OPTIONS, "backend", "aot_eager")  # AOTAutograd's graphs, no C++ build
    code, document = diff_json(FILES / "compiled.py", "--against", "eager")
    assert code == 0, document
    (found,) = document["pairs"]
    assert (found["reference_label"], found["candidate_label"]) == ("eager", "compiled")
    (gap,) = found["structure"]  # the compiled graph is one node
    assert [n["name"] for n in gap["candidate"]] == ["CompiledFunctionBackward"]
    assert [r["name"] for r in found["gradients"]] == [
        "x",
        "mlp.0.weight",
        "mlp.0.bias",
        "mlp.2.weight",
        "mlp.2.bias",
    ]
    assert {r["status"] for r in found["gradients"]} == {"agree"}


def test_an_engine_case_against_eager_is_a_usage_error():
    code, document = diff_json(FILES / "unstable.py", "--against", "eager")
    assert code == 2 and "--against eager compiles a torch file" in document["errors"][0]["message"]


def test_the_case_on_a_gpu_against_the_cpu(fake_cuda):
    code, document = diff_json(FILES / "unstable.py", "--device", "cuda", "--against", "cpu")
    assert code == 0, document
    (found,) = document["pairs"]
    assert (found["reference_label"], found["candidate_label"]) == ("cpu", "cuda")
    assert found["nodes"] == [4, 4] and {r["status"] for r in found["gradients"]} == {"agree"}


def test_against_cpu_needs_another_device():
    code, document = run_gradcli_json("diff", FILES / "unstable.py", "--against", "cpu", "--json")
    assert code == 2
