"""The JSON Schemas of gradcli.check/1, gradcli.graph/1 and gradcli.anomaly/1 as a contract.

The schemas are shipped in the package (gradcli/schemas/*.json, in the wheel) and printed by
`gradcli schema NAME`; a corpus of real outputs of the three commands (passing, failing, loading
errors, second order, torch files) follows them, and they are strict enough to reject a wrong
type, a missing key, an unknown key or a value outside an enum.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile

import pytest
from json_contract import validated, violations
from jsonschema import Draft202012Validator
from paths import ROOT, TESTS
from typer.testing import CliRunner

from gradcli.cli.app import app
from gradcli.schemas import NAMES, schema, schema_text

SCRIPTS = TESTS / "anomaly_scripts"
HAS_TORCH = importlib.util.find_spec("torch") is not None


def document(*args: str) -> dict:
    """The --json document of a real run (any exit code but 3), validated."""
    result = CliRunner().invoke(app, [*map(str, args), "--json"])
    assert result.exit_code != 3, result.output
    return validated(result.stdout)


def test_each_schema_is_valid_draft_2020_12_and_named_as_its_documents():
    for name in NAMES:
        shipped = schema(name)
        Draft202012Validator.check_schema(shipped)
        assert shipped["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert shipped["title"] == f"gradcli.{name}/1" == shipped["properties"]["schema"]["const"]


def test_gradcli_schema_prints_the_shipped_file_and_refuses_an_unknown_name():
    for name in NAMES:
        result = CliRunner().invoke(app, ["schema", name])
        assert result.exit_code == 0
        assert (
            result.stdout == schema_text(name) == (ROOT / "gradcli" / "schemas" / f"{name}.json").read_text()
        )
    unknown = CliRunner().invoke(app, ["schema", "report"])
    assert unknown.exit_code == 2
    assert "'report' is not one of 'check', 'graph', 'anomaly', 'diff', 'error'" in " ".join(
        unknown.output.replace("│", " ").split()
    )


def test_the_schemas_are_in_the_wheel(tmp_path):
    """Built as `pip install` builds it, in an isolated environment with pyproject's build
    requirements: the test venv's own setuptools may be too old (a fresh venv's is)."""
    source = tmp_path / "src"
    source.mkdir()
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, source)
    for package in ("engine", "gradcli"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q", "-w", "dist"],
        cwd=source,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = (source / "dist").glob("gradcli-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    assert {f"gradcli/schemas/{name}.json" for name in NAMES} <= shipped


# --------------------------------------------------------------------------- a corpus


CHECK_RUNS = [
    ("examples/model.py",),  # passes: the three case forms, float32 upcast
    ("examples/buggy.py",),  # fails: mismatches, the backward's source
    ("tests/corpus/bad.py",),  # every kind of failure: problems, nondeterminism, undefined grads
    ("tests/corpus/good.py", "--fast"),
    ("tests/corpus/second_order.py", "--order", "2"),
    ("tests/corpus/model_form.py",),
    ("examples/no_such_file.py",),  # a loading error
    ("examples/model.py", "-k", "no_case_has_this_name"),
    ("examples/model.py", "--dtype", "native"),  # float32 against a float64 reference; null run tolerances
    ("examples/model.py", "--dtype", "native", "--reference", "native"),
    ("tests/corpus/dtype_error.py",),  # a DTYPE problem
]
TORCH_CHECK_RUNS = [("examples/torch/check_model.py",), ("examples/torch/check_function.py",)]


@pytest.mark.parametrize("args", CHECK_RUNS + (TORCH_CHECK_RUNS if HAS_TORCH else []), ids=" ".join)
def test_check_documents_follow_the_schema(args, monkeypatch):
    monkeypatch.chdir(ROOT)
    doc = document("check", *args)
    assert doc["exit_code"] in (0, 1, 2, 5)


def test_the_check_corpus_covers_what_the_schema_describes(monkeypatch):
    monkeypatch.chdir(ROOT)
    docs = [document("check", *args) for args in CHECK_RUNS[:5]]
    cases = [case for doc in docs for case in doc["cases"]]
    pairs = [pair for case in cases for pair in case["pairs"]]
    assert {case["passed"] for case in cases} == {True, False}
    assert any(case["problems"] for case in cases) and any(case["backwards"] for case in cases)
    assert any(pair["mismatches"] for pair in pairs) and any(pair["order"] == 2 for pair in pairs)
    assert {case["mode"] for case in cases} == {"fast", "full"}
    assert document("check", "nope.py")["errors"][0]["message"] == "file not found"


GRAPH_RUNS = [
    ("examples/expr.py",),
    ("examples/expr.py", "--depth", "2"),
    ("examples/model.py",),
]


@pytest.mark.parametrize(
    "args", GRAPH_RUNS + ([("examples/torch/expr.py",)] if HAS_TORCH else []), ids=" ".join
)
def test_graph_documents_follow_the_schema(args, monkeypatch):
    monkeypatch.chdir(ROOT)
    doc = document("graph", *args)
    assert doc["nodes"] and doc["edges"]


def test_a_graph_with_stale_saved_tensors_and_constants_follows_the_schema(tmp_path):
    script = tmp_path / "inplace.py"
    script.write_text(
        "import engine\n"
        "a = engine.ones(2, requires_grad=True)\n"
        "b = a + 2\n"
        "loss = (b * b * 3).mean()\n"
        "b[0] = 1000.\n"
    )
    doc = document("graph", script, "--show-saved")
    assert doc["summary"]["stale_saved"] == 2 and any(edge["constant"] for edge in doc["edges"])


ANOMALY_SCRIPTS = sorted(p.name for p in SCRIPTS.glob("*.py") if HAS_TORCH or not p.name.startswith("torch_"))


@pytest.mark.parametrize("script", [*ANOMALY_SCRIPTS, "no_such_script.py"])
def test_anomaly_documents_follow_the_schema(script):
    doc = document("anomaly", "--check-forward", SCRIPTS / script)
    assert doc["exit_code"] in (0, 1, 2)


# ------------------------------------------------------------------------- strictness


def broken_copies(doc: dict, schema_id: str):
    """(what was broken, the broken copy) for a handful of ways a document can break a schema."""
    path = {
        "gradcli.check/1": ("cases", 0, "pairs", 0),
        "gradcli.graph/1": ("nodes", 0, "outputs", 0),
        "gradcli.anomaly/1": ("findings", 0),
    }[schema_id]

    def at(data):
        for key in path:
            data = data[key]
        return data

    first_key = next(iter(at(doc)))
    for what, change in [
        ("wrong type at the top", lambda d: d.__setitem__("version", 1)),
        ("missing top-level key", lambda d: d.pop("summary")),
        ("unknown top-level key", lambda d: d.__setitem__("extra", True)),
        ("wrong schema id", lambda d: d.__setitem__("schema", schema_id.replace("/1", "/2"))),
        ("nested wrong type", lambda d: at(d).__setitem__(first_key, [at(d)[first_key]])),
        ("nested missing key", lambda d: at(d).pop(first_key)),
        ("nested unknown key", lambda d: at(d).__setitem__("extra", 1)),
        ("count as a string", lambda d: d["summary"].__setitem__(next(iter(d["summary"])), "1")),
    ]:
        broken = copy.deepcopy(doc)
        change(broken)
        yield what, broken


@pytest.mark.parametrize(
    "args",
    [("check", "examples/buggy.py"), ("graph", "examples/expr.py"), ("anomaly", "examples/script.py")],
    ids=lambda a: a[0],
)
def test_the_schemas_reject_wrong_types_missing_and_unknown_keys(args, monkeypatch):
    monkeypatch.chdir(ROOT)
    doc = document(*args)
    schema_id = doc["schema"]
    for what, broken in broken_copies(doc, schema_id):
        assert violations(broken, schema_id), f"{schema_id}: {what} was accepted"
    with pytest.raises(AssertionError, match="breaks its schema"):
        validated(json.dumps({**doc, "exit_code": 7}))


def test_numbers_that_are_not_finite_are_the_documented_strings_only(monkeypatch):
    monkeypatch.chdir(ROOT)
    doc = document("check", "examples/buggy.py")
    pair = next(p for p in doc["cases"][0]["pairs"] if not p["passed"])
    for value in ("inf", "-inf", "nan", 1.5):
        assert not violations(
            {**doc, "cases": [{**doc["cases"][0], "pairs": [{**pair, "max_rel_err": value}]}]}
        )
    assert violations({**doc, "cases": [{**doc["cases"][0], "pairs": [{**pair, "max_rel_err": "Infinity"}]}]})
