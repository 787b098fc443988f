"""`gradcli graph --format png|pdf|html`, --show-saved values in images, --group-modules clusters,
and the HTML page in a real headless browser (skipped without Graphviz / Chromium)."""

import json
import re
import shutil
import textwrap

import pytest
from headless import clicking, needs_chromium, page_result
from typer.testing import CliRunner

from gradcli.cli.app import app

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
SCRIPT = """
import engine
from engine import nn

model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
x = engine.randn(4, 3, requires_grad=True)
loss = (model(x) * 2.0).sum()
"""


def run(tmp_path, *args: str):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    return CliRunner().invoke(app, ["graph", str(path), *args])


def test_group_modules_puts_each_modules_parameters_and_their_ops_in_one_cluster(tmp_path):
    result = run(tmp_path, "--format", "dot", "--group-modules")
    assert result.exit_code == 0, result.output
    labels = dict(re.findall(r'\t(n\d+) \[label="([^"]*)"', result.stdout))
    clusters = {
        label: sorted(labels[n].split("\\n")[0] for n in members.split())
        for label, members in re.findall(
            r'subgraph cluster_\d+ \{ label="([^"]+)".*?((?:n\d+ ?)+) \}', result.stdout
        )
    }
    # each Linear: its parameters, the weight's transpose and the addmm that reads them; Tanh,
    # which owns no parameter, the node its forward made
    assert clusters == {
        **{
            f"model.{k}": sorted(["AddmmBackward0", "TBackward0", f"model.{k}.weight", f"model.{k}.bias"])
            for k in (0, 2)
        },
        "model.1": ["TanhBackward0"],
    }
    assert "subgraph" not in run(tmp_path, "--format", "dot").stdout


def test_show_saved_puts_saved_values_in_the_node_label_as_torchviz_show_attrs(tmp_path):
    plain = run(tmp_path, "--format", "dot").stdout
    shown = run(tmp_path, "--format", "dot", "--show-saved").stdout
    mul = next(line for line in shown.splitlines() if 'label="MulBackward0' in line)
    assert "other: 2.0" in mul and "other: 2.0" not in plain


@needs_dot
@pytest.mark.parametrize(("fmt", "magic"), [("png", b"\x89PNG"), ("pdf", b"%PDF")])
def test_png_and_pdf_through_graphviz(tmp_path, fmt, magic):
    target = tmp_path / f"graph.{fmt}"
    result = run(tmp_path, "--format", fmt, "-o", str(target), "--group-modules")
    assert result.exit_code == 0, result.output
    assert target.read_bytes().startswith(magic) and f"wrote {target}" in result.stderr


def test_png_without_graphviz_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    result = run(tmp_path, "--format", "png", "-o", str(tmp_path / "g.png"))
    assert result.exit_code == 2 and "apt install graphviz" in result.stderr and "-Tpng" in result.stderr


@needs_dot
def test_html_is_one_self_contained_file(tmp_path):
    target = tmp_path / "graph.html"
    result = run(tmp_path, "--format", "html", "-o", str(target))
    assert result.exit_code == 0, result.output
    page = target.read_text()
    assert "<svg" in page and 'id="graph-data"' in page and "<script>" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing fetched
    data = json.loads(re.search(r'id="graph-data">(.*?)</script>', page, re.S).group(1))
    assert data["schema"] == "gradcli.graph/1"


# The harness goes around a copy of the page: errors are recorded from the first script on,
# then a node is clicked and the search used, and the result is left in the DOM Chromium dumps.
HARNESS = clicking(
    'g.querySelector("title").textContent === "n2"',
    'const s = document.getElementById("search"); s.value = "model.2"; s.dispatchEvent(new Event("input"));',
    matches='document.getElementById("matches").textContent',
)


@needs_dot
@needs_chromium
def test_html_in_a_headless_browser_loads_cleanly_and_a_click_shows_the_nodes_details(tmp_path):
    target = tmp_path / "graph.html"
    assert run(tmp_path, "--format", "html", "-o", str(target), "--group-modules").exit_code == 0
    result = page_result(target.read_text(), tmp_path, HARNESS)
    assert result["errors"] == [] and result["ready"] == "true"
    document = json.loads(run(tmp_path, "--format", "json").stdout)
    node = document["nodes"][2]
    assert result["details"].startswith(f"{node['name']} #2")
    shapes = [f"({', '.join(map(str, s['shape']))}" for s in node["saved"] if s["kind"] == "tensor"]
    assert shapes and all(shape in result["details"] for shape in shapes)
    assert "hooks: 0 pre, 0 post, 0 tensor" in result["details"]
    line = node["forward_line"]
    assert (line["line"], line["code"]) == (7, "loss = (model(x) * 2.0).sum()")
    shown = [text.strip() for text in result["details"].split("\n") if text.strip()]
    assert shown[2:4] == [f"made at {line['file']}:7", "loss = (model(x) * 2.0).sum()"]
    assert result["matches"] == "2 matches"  # model.2.weight, model.2.bias
