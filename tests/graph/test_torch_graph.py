"""`gradcli graph` on PyTorch files: the same output forms as for the engine, read from torch's nodes.

Each expectation is compared with torch's own graph, walked here independently of gradcli
(`type(fn).__name__`, `next_functions`, `_saved_*`, versions), so a wrong reading fails.
The JSON output is validated against the schema documented in gradcli/graph/render/drawing.py.
"""

import runpy
import textwrap
from pathlib import Path

import pytest
from json_contract import validated
from paths import ROOT
from typer.testing import CliRunner

from gradcli.check import loading
from gradcli.cli.app import app
from graph.test_cli_graph import documented_schema, expand, parse_dot, validate

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch_parity

EXAMPLE = ROOT / "examples" / "torch" / "expr.py"


def run(*args: str):
    result = CliRunner().invoke(app, ["graph", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def run_json(*args: str) -> dict:
    result = run(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    document = validated(result.stdout)
    validate(document, documented_schema())
    return document


def write(tmp_path: Path, source: str, name: str = "script.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def torch_tree(fn) -> tuple:
    """torch's graph below `fn` as (type name, [children]), every path expanded, constants left out."""
    return (type(fn).__name__, [torch_tree(n) for n, _ in fn.next_functions if n is not None])


def torch_nodes(fn) -> list:
    """Every node below `fn` once, depth-first preorder, walked here without gradcli."""
    order, seen, stack = [], set(), [fn]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(n for n, _ in reversed(node.next_functions) if n is not None)
    return order


def by_name(document: dict) -> dict:
    return {name: node for node in document["nodes"] for out in node["outputs"] for name in out["names"]}


# ------------------------------------------------------------------------ structure, names


def test_the_seed_expression_in_torch_draws_as_the_engine_draws_it(tmp_path, monkeypatch):
    engine_file = ROOT / "examples" / "expr.py"
    torch_file = write(tmp_path, engine_file.read_text().replace("import engine as torch", "import torch"))
    engine_doc = run_json(engine_file)
    torch_doc = run_json(torch_file)
    for key in ("roots", "summary", "targets_from"):
        assert torch_doc[key] == engine_doc[key]
    for engine_node, torch_node in zip(engine_doc["nodes"], torch_doc["nodes"], strict=True):
        assert {k: v for k, v in torch_node.items() if k not in ("saved", "forward_line")} == {
            k: v for k, v in engine_node.items() if k not in ("saved", "forward_line")
        }
        lines = [node["forward_line"] for node in (engine_node, torch_node)]
        if lines[0] is None:
            assert lines[1] is None
        else:  # the same line of the two files
            assert [(line["line"], line["code"]) for line in lines] == [
                (lines[0]["line"], lines[0]["code"])
            ] * 2
    ns = runpy.run_path(str(torch_file))
    (root,) = torch_doc["roots"]
    assert expand(torch_doc, root["node"]) == torch_tree(ns["loss"].grad_fn)
    engine_tree = run(engine_file).stdout.split("\n", 1)[1]
    assert run(torch_file).stdout.split("\n", 1)[1] == engine_tree


def test_example_nodes_edges_and_metadata_match_torchs_own_graph(monkeypatch):
    monkeypatch.chdir(ROOT)
    document = run_json("examples/torch/expr.py")
    ns = runpy.run_path(str(EXAMPLE))
    loss = ns["loss"]
    (root,) = document["roots"]
    assert root["name"] == "loss" and document["targets_from"] == "top-level"
    assert expand(document, root["node"]) == torch_tree(loss.grad_fn)
    nodes = torch_nodes(loss.grad_fn)
    assert [n["name"] for n in document["nodes"]] == [type(fn).__name__ for fn in nodes]
    index = {id(fn): i for i, fn in enumerate(nodes)}
    edges = {(e["node"], e["index"]): e for e in document["edges"]}
    for i, fn in enumerate(nodes):
        for k, (nxt, nr) in enumerate(fn.next_functions):
            edge = edges[(i, k)]
            assert edge["next"] == (None if nxt is None else index[id(nxt)]) and edge["output_nr"] == nr
        for out, meta in zip(document["nodes"][i]["outputs"], fn._input_metadata, strict=True):
            assert out["shape"] == list(meta.shape)
            assert out["dtype"] == str(meta.dtype).removeprefix("torch.") and out["device"] == str(
                meta.device
            )
    named = by_name(document)
    assert named["hidden"]["name"] == type(ns["hidden"].grad_fn).__name__ == "ClampGradBackward"
    assert named["hidden"]["hooks"] == {"pre": 0, "post": 0, "tensor": 1}
    for path, param in ns["model"].named_parameters():
        leaf = named[f"model.{path}"]
        assert leaf["kind"] == "leaf" and leaf["outputs"][0]["shape"] == list(param.shape)
        assert leaf["leaf"] == {"requires_grad": True, "is_leaf": True, "has_grad": False, "grad_norm": None}
    assert document["summary"]["nodes"] == len(nodes)
    assert document["summary"]["leaves"] == sum(type(fn).__name__ == "AccumulateGrad" for fn in nodes)


def test_example_tree_names_parameters_the_custom_function_and_the_hook(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = run("examples/torch/expr.py")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "examples/torch/expr.py: backward graph of loss"
    assert lines[1].startswith("MseLossBackward0  loss  () float32 cpu")
    assert any(
        "ClampGradBackward  hidden  (8, 4) float32 cpu" in line and "hooks: 1 tensor" in line
        for line in lines
    )
    assert any(line.endswith("AccumulateGrad  model.0.weight  (4, 3) float32 cpu") for line in lines)
    assert lines[-1].startswith("11 nodes (4 leaves), 2 constants, 7 saved tensors")


def test_a_multi_output_node_and_a_shared_subgraph(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        x = torch.arange(6.0, requires_grad=True)
        a, b, c = x.split(2)
        h = a * b
        for _ in range(30):
            h = h * h
        out = (h + c).sum()
        """,
    )
    document = run_json(path, "--target", "out")
    ns = runpy.run_path(str(path))
    assert [n["name"] for n in document["nodes"]] == [
        type(fn).__name__ for fn in torch_nodes(ns["out"].grad_fn)
    ]
    split = next(n for n in document["nodes"] if n["name"] == "SplitBackward0")
    assert [o["names"] for o in split["outputs"]] == [["a"], ["b"], ["c"]]
    assert [o["shape"] for o in split["outputs"]] == [[2], [2], [2]]
    assert {e["output_nr"] for e in document["edges"] if e["next"] == split["id"]} == {0, 1, 2}
    assert document["summary"]["nodes"] == len(torch_nodes(ns["out"].grad_fn)) < 40


# ------------------------------------------------------------------------------ saved values


INPLACE = """
    import torch
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.
"""


def test_saved_tensors_and_one_modified_in_place(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the stale-tensor line whole
    path = write(tmp_path, INPLACE)
    document = run_json(path, "--target", "loss")
    ns = runpy.run_path(str(path))
    mul = ns["loss"].grad_fn.next_functions[0][0]
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        getattr(mul, "_saved_self")  # noqa: B009 - torch's own check agrees with what gradcli shows
    node = next(n for n in document["nodes"] if n["name"] == "MulBackward0")
    declared = [a for a in type(mul).__dict__ if a.startswith("_saved_")]  # torch's order: other, self
    assert [s["name"] for s in node["saved"]] == declared == ["_saved_other", "_saved_self"]
    for saved in node["saved"]:
        assert saved["kind"] == "tensor" and saved["names"] == ["b"] and saved["shape"] == [2]
        assert (saved["saved_version"], saved["current_version"], saved["stale"]) == (
            0,
            ns["b"]._version,
            True,
        )
        assert saved["bytes"] == 8
    assert document["summary"]["stale_saved"] == 2 and document["summary"]["saved_bytes"] == 8
    tree = run(path, "--target", "loss").stdout
    assert (
        "_saved_self: b (2,) float32 cpu, 8 B, saved at version 0, now version 1: modified in place, "
        "so this node's backward will fail" in tree
    )
    assert tree.rstrip().endswith("2 saved tensors were modified in place: backward will fail")


def test_show_saved_lists_torchs_saved_attributes_in_its_order(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        x = torch.randn(3, 4, requires_grad=True)
        w = torch.randn(4, 2, requires_grad=True)
        y = (x @ w).exp()
        """,
    )
    document = run_json(path)
    ns = runpy.run_path(str(path))
    mm = ns["y"].grad_fn.next_functions[0][0]
    node = next(n for n in document["nodes"] if n["name"] == "MmBackward0")
    attrs = [a for a in type(mm).__dict__ if a.startswith("_saved_")]
    tensors = [a for a in attrs if torch.is_tensor(getattr(mm, a))]
    assert [s["name"] for s in node["saved"]] == tensors + [a for a in attrs if a not in tensors]
    values = {s["name"]: s["value"] for s in node["saved"] if s["kind"] == "value"}
    assert values["_saved_self_sym_sizes"] == repr(mm._saved_self_sym_sizes)
    exp = next(n for n in document["nodes"] if n["name"] == "ExpBackward0")
    (result,) = exp["saved"]
    assert result["name"] == "_saved_result" and result["is_output"] and result["names"] == ["y"]
    tree = run(path, "--show-saved").stdout
    assert "_saved_result: y (3, 2) float32 cpu, 24 B, saved at version 0 (now 0)" in tree
    assert f"_saved_self_sym_sizes = {mm._saved_self_sym_sizes!r}" in tree


def test_a_custom_functions_saved_tensors_and_a_stale_one(tmp_path):
    path = write(
        tmp_path,
        """
        import torch

        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x * w

            @staticmethod
            def backward(ctx, grad):
                x, w = ctx.saved_tensors
                return grad * w, grad * x

        x = torch.ones(3, requires_grad=True)
        w = torch.full((3,), 2.0, requires_grad=True)
        h = x * 1.0
        y = Scale.apply(h, w)
        h.mul_(3)
        """,
    )
    document = run_json(path)
    ns = runpy.run_path(str(path))
    assert type(ns["y"].grad_fn).__name__ == "ScaleBackward"
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        getattr(ns["y"].grad_fn, "saved_tensors")  # noqa: B009
    node = by_name(document)["y"]
    assert node["name"] == "ScaleBackward"
    first, second = node["saved"]
    assert first["name"] == "saved_tensors[0]" and first["names"] == ["h"] and first["stale"]
    assert (first["saved_version"], first["current_version"]) == (0, 1)
    assert second["names"] == ["w"] and not second["stale"]


def test_saved_tensors_hooks_packed_values_and_a_failing_unpack_hook(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        x = torch.ones(3, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: ("packed", t * 2), lambda p: p[1]):
            y = x.sin()
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: 1 / 0):
            z = (y * y).sum()
        """,
    )
    document = run_json(path)
    ns = runpy.run_path(str(path))
    sin = ns["y"].grad_fn
    assert not torch.is_tensor(sin._raw_saved_self.data)  # torch hands back what the pack hook made
    (packed,) = by_name(document)["y"]["saved"]
    assert packed["kind"] == "tensor" and packed["shape"] == [3] and not packed["stale"]
    mul = next(n for n in document["nodes"] if n["name"] == "MulBackward0")
    assert {s["value"] for s in mul["saved"]} == {"<unreadable: ZeroDivisionError: division by zero>"}


def test_after_backward_freed_buffers_grads_and_retained_grads(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the summary line whole
    path = write(
        tmp_path,
        """
        import torch
        w = torch.tensor([3.0, 4.0], requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda p: None)
        h = w * w
        h.retain_grad()
        loss = h.sum()
        loss.backward()
        """,
    )
    document = run_json(path)
    ns = runpy.run_path(str(path))
    named = by_name(document)
    assert named["w"]["leaf"]["grad_norm"] == pytest.approx(ns["w"].grad.norm().item())
    assert named["w"]["hooks"] == {"pre": 0, "post": 1, "tensor": 0}
    (h_out,) = named["h"]["outputs"]
    assert h_out["retains_grad"] and h_out["grad_norm"] == pytest.approx(ns["h"].grad.norm().item())
    assert named["h"]["saved_freed"] and named["h"]["saved"] == []
    assert document["summary"]["freed_nodes"] == 1 and document["summary"]["saved_tensors"] == 0
    tree = run(path).stdout
    assert "AccumulateGrad [#2]  w  (2,) float32 cpu  grad.norm()=10  hooks: 1 post" in tree
    assert (
        "MulBackward0  h  (2,) float32 cpu  retains_grad=True grad.norm()=1.414  (saved tensors freed)"
        in tree
    )
    assert "1 node already freed its saved tensors" in tree


# --------------------------------------------------------------------- formats, options, errors


def test_dot_output_parses_back_to_the_same_graph(monkeypatch):
    monkeypatch.chdir(ROOT)
    document = run_json("examples/torch/expr.py")
    result = run("examples/torch/expr.py", "--format", "dot")
    assert result.exit_code == 0, result.output
    _, nodes, edges = parse_dot(result.stdout)
    for node in document["nodes"]:
        attrs = nodes[f"n{node['id']}"]
        assert attrs["tooltip"] == node["name"]
        assert attrs["fillcolor"] == ("lightblue" if node["kind"] == "leaf" else "lightgrey")
    drawn = {(a, b) for a, b, _ in edges if a.startswith("n") and b.startswith("n")}
    assert drawn == {(f"n{e['next']}", f"n{e['node']}") for e in document["edges"] if e["next"] is not None}
    assert nodes[f"n{by_name(document)['model.0.weight']['id']}"]["label"].startswith("model.0.weight\n")


def test_dot_marks_a_stale_saved_tensor(tmp_path):
    path = write(tmp_path, INPLACE)
    _, nodes, _ = parse_dot(run(path, "--target", "loss", "--format", "dot").stdout)
    stale = [attrs for name, attrs in nodes.items() if name.startswith("s")]
    assert len(stale) == 2 and all(a["fillcolor"] == "red" for a in stale)
    assert all("version 0, now 1" in a["label"] for a in stale)


def test_depth_limits_the_torch_graph(monkeypatch):
    monkeypatch.chdir(ROOT)
    document = run_json("examples/torch/expr.py", "--depth", "2")
    assert document["truncated"] and {n["level"] for n in document["nodes"]} == {0, 1}
    tree = run("examples/torch/expr.py", "--depth", "2").stdout
    assert "TanhBackward0" not in tree and "3 inputs below (--depth)" in tree


def test_a_file_mixing_engine_and_torch_tensors_is_a_usage_error(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        import torch
        a = engine.ones(2, requires_grad=True)
        b = torch.ones(2, requires_grad=True)
        engine_loss = (a * 2).sum()
        torch_loss = (b * 2).sum()
        """,
    )
    result = run(path)
    assert result.exit_code == 2
    assert "engine_loss is an engine.Tensor; torch_loss is a torch.Tensor" in result.output
    assert "Traceback" not in result.output
    assert run(path, "--target", "torch_loss").exit_code == 0


def test_a_torch_tensor_without_grad_fn_is_explained(tmp_path):
    path = write(tmp_path, "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.detach() * 2\n")
    result = run(path, "--target", "y")
    assert result.exit_code == 2 and "`y` has no grad_fn: it does not require grad" in result.output


def test_torch_cases_are_drawn(tmp_path):
    if not loading.is_tensor(torch.ones(1)):
        pytest.skip(
            "gradcli.check.loading reads engine case inputs only (torch inputs come with `gradcli check`'s part)"
        )
    path = write(
        tmp_path,
        """
        import torch
        import gradcli

        @gradcli.case(torch.randn(3, dtype=torch.float64, requires_grad=True))
        def square(x):
            return (x * x).sum()
        """,
    )
    document = run_json(path)
    assert document["targets_from"] == "cases"
    assert [n["name"] for n in document["nodes"]] == ["SumBackward0", "MulBackward0", "AccumulateGrad"]
    assert by_name(document)["x"]["outputs"][0]["dtype"] == "float64"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_device_cuda_draws_cuda_tensors(monkeypatch):
    monkeypatch.chdir(ROOT)
    document = run_json("examples/torch/expr.py", "--device", "cuda")
    assert {o["device"] for n in document["nodes"] for o in n["outputs"]} == {"cuda:0"}
