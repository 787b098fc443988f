"""`gradcli graph`: the seed's graph as PyTorch builds it, shared subgraphs, the four formats,
errors, and a 10,000-node graph.

In-process through typer's CliRunner. The JSON output is validated against the schema written
in `gradcli/graph/render/drawing.py`'s docstring (parsed here), and the dot output is parsed back.
"""

import json
import re
import stat
import sys
import textwrap
from pathlib import Path

import pytest
from cli_runner import run_gradcli
from json_contract import validated
from paths import ROOT

from gradcli.graph.render import drawing as graph_render

EXPR = ROOT / "examples" / "expr.py"

# The seed's graph as real PyTorch 2.13 builds it (torch 2.13.0+cpu: type(node).__name__ of
# loss.grad_fn, then of each next_functions entry in order, every path expanded).
_L1 = ("MulBackward0", [("AccumulateGrad", []), ("AccumulateGrad", [])])
TORCH_SEED_GRAPH = (
    "MeanBackward0",
    [
        (
            "MulBackward0",
            [
                ("AddBackward0", [_L1, ("AccumulateGrad", [])]),
                ("MulBackward0", [_L1, ("AccumulateGrad", [])]),
            ],
        )
    ],
)
# The same expansion with the user's names for what each node produced.
SEED_NAMES = (
    "loss",
    [("l4", [("l2", [("l1", [("inp", []), ("w1", [])]), ("w2", [])]), ("l3", [("l1", [("inp", []), ("w1", [])]), ("w3", [])])])],
)  # fmt: skip

SEED_TREE = """\
examples/expr.py: backward graph of loss
MeanBackward0  loss  () float32 cpu
└── MulBackward0  l4  (2, 2) float32 cpu
    ├── AddBackward0  l2  (2, 2) float32 cpu
    │   ├── MulBackward0 [#3]  l1  (2, 2) float32 cpu
    │   │   ├── AccumulateGrad  inp  (2, 2) float32 cpu
    │   │   └── AccumulateGrad  w1  () float32 cpu
    │   └── AccumulateGrad  w2  () float32 cpu
    └── MulBackward0  l3  (2, 2) float32 cpu
        ├── MulBackward0 [#3]  l1  (drawn above)
        └── AccumulateGrad  w3  () float32 cpu
9 nodes (4 leaves), 6 saved tensors holding 72 B, depth 5
"""


def run(*args: str):
    return run_gradcli("graph", *args)


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


def expand(document: dict, node: int) -> tuple:
    """A node and its inputs, every path expanded (constants left out), as (name, [children])."""
    edges = [e for e in document["edges"] if e["node"] == node and e["next"] is not None]
    edges.sort(key=lambda e: e["index"])
    return (document["nodes"][node]["name"], [expand(document, e["next"]) for e in edges])


def expand_names(document: dict, node: int) -> tuple:
    edges = [e for e in document["edges"] if e["node"] == node and e["next"] is not None]
    edges.sort(key=lambda e: e["index"])
    names = [n for out in document["nodes"][node]["outputs"] for n in out["names"]]
    return (names[0] if names else None, [expand_names(document, e["next"]) for e in edges])


# ----------------------------------------------------------------------- the seed example


def test_seed_graph_has_pytorchs_nodes_structure_and_the_users_names(monkeypatch):
    monkeypatch.chdir(ROOT)
    document = run_json("examples/expr.py")
    (root,) = document["roots"]
    assert root["name"] == "loss" and document["targets_from"] == "top-level"
    assert expand(document, root["node"]) == TORCH_SEED_GRAPH
    assert expand_names(document, root["node"]) == SEED_NAMES
    by_name = {n["outputs"][0]["names"][0]: n for n in document["nodes"]}
    assert by_name["l4"]["outputs"][0]["shape"] == [2, 2] and by_name["loss"]["outputs"][0]["shape"] == []
    assert by_name["w1"]["kind"] == "leaf" and by_name["w1"]["leaf"]["has_grad"] is False
    assert {n["outputs"][0]["dtype"] for n in document["nodes"]} == {"float32"}
    assert document["summary"] == {
        "nodes": 9, "leaves": 4, "constants": 0, "saved_tensors": 6, "saved_bytes": 72,
        "stale_saved": 0, "freed_nodes": 0, "depth": 5,
    }  # fmt: skip


def test_seed_tree_text(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = run("examples/expr.py")
    assert result.exit_code == 0, result.output
    assert result.stdout == SEED_TREE


def test_readme_shows_the_real_seed_tree():
    readme = (ROOT / "README.md").read_text()
    assert "$ gradcli graph examples/expr.py\n" + SEED_TREE in readme


def test_the_docs_document_the_same_json_schema_as_the_module():
    doc = graph_render.__doc__
    schema = textwrap.dedent(doc[doc.index("::") + 2 :]).strip("\n")
    assert "```text\n" + schema + "\n```" in (ROOT / "docs" / "graph.md").read_text()


def test_engine_builds_the_same_graph_as_torch_when_torch_is_here(torch):
    ns: dict = {"torch": torch}
    exec(EXPR.read_text().replace("import engine as torch", ""), ns)

    def walk(fn):
        return (type(fn).__name__, [walk(n) for n, _ in fn.next_functions if n is not None])

    assert walk(ns["loss"].grad_fn) == TORCH_SEED_GRAPH


def test_a_shared_subgraph_is_drawn_once(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # 41 levels of guides fit in 200 columns, not in 120
    # h = h * h forty times: 2**40 paths, 41 nodes.
    path = write(
        tmp_path,
        """
        import engine
        x = engine.tensor(1.01, requires_grad=True)
        h = x
        for _ in range(40):
            h = h * h
        """,
    )
    result = run(path)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) < 100
    assert sum("MulBackward0" in line and "(drawn above)" not in line for line in lines) == 40
    assert sum("(drawn above)" in line for line in lines) == 40
    document = run_json(path)
    assert document["summary"]["nodes"] == 41 and document["summary"]["depth"] == 41
    assert all(n["consumers"] == 2 for n in document["nodes"][1:-1])


# ---------------------------------------------------------------------------- targets


def test_default_targets_are_top_level_results_nothing_else_uses(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        x = engine.ones(3, requires_grad=True)
        y = x.exp()
        a = y.sum()
        b = (y * 2).mean()
        """,
    )
    document = run_json(path)
    assert [r["name"] for r in document["roots"]] == ["a", "b"]
    assert document["summary"]["nodes"] == 5  # ExpBackward0 and x's AccumulateGrad once
    assert [r["name"] for r in run_json(path, "--target", "y")["roots"]] == ["y"]


def test_cases_are_drawn_when_no_top_level_tensor_has_a_grad_fn(monkeypatch):
    monkeypatch.chdir(ROOT)
    document = run_json("examples/model.py")
    assert document["targets_from"] == "cases"
    assert [r["name"] for r in document["roots"]] == ["model", "swish", "swish_second_order", "mse_loss"]
    names = {n for node in document["nodes"] for out in node["outputs"] for n in out["names"]}
    assert {"model.w1", "model.b1", "model.w2", "model.b2", "x"} <= names
    swish = run_json("examples/model.py", "--target", "swish")
    assert [r["name"] for r in swish["roots"]] == ["swish"]
    assert [n["name"] for n in swish["nodes"]] == ["SwishBackward", "AccumulateGrad"]


def test_parameters_of_top_level_objects_are_named(tmp_path):
    path = write(
        tmp_path,
        """
        import engine

        class Net:
            def __init__(self):
                self.weight = engine.ones(3, 2, requires_grad=True)

            def named_parameters(self):
                return [("weight", self.weight)]

        net = Net()
        loss = (engine.ones(4, 3) @ net.weight).sum()
        """,
    )
    document = run_json(path)
    leaves = [n for n in document["nodes"] if n["kind"] == "leaf"]
    assert [leaf["outputs"][0]["names"] for leaf in leaves] == [["net.weight"]]


# --------------------------------------------------------------- what each node shows


def test_leaves_after_backward_retained_grads_hooks_and_freed_buffers(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        x = engine.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g)
        z = y.exp().sum()
        z.backward()
        """,
    )
    result = run(path)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert re.search(r"AccumulateGrad  x  \(3,\) float32 cpu  grad.norm\(\)=25\.6", out)
    assert re.search(
        r"MulBackward0  y  \(3,\) float32 cpu  retains_grad=True grad.norm\(\)=12\.8  hooks: 1 tensor", out
    )
    assert "constant  ?" in out  # the Python number 2, which MulBackward0 no longer holds
    document = run_json(path)
    assert document["summary"]["freed_nodes"] == 2 and document["summary"]["saved_tensors"] == 0
    mul = next(n for n in document["nodes"] if n["name"] == "MulBackward0")
    assert mul["saved_freed"] and mul["hooks"] == {"pre": 0, "post": 0, "tensor": 1}
    assert mul["outputs"][0]["retains_grad"] and mul["outputs"][0]["grad_norm"] == pytest.approx(
        12.8, rel=1e-3
    )


def test_saved_tensors_and_a_version_mismatch(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the stale-tensor line whole
    # The seed note's in-place example: b is saved by MulBackward0, then modified.
    path = write(
        tmp_path,
        """
        import engine
        a = engine.tensor([1.0, 3.0], requires_grad=True)
        b = a + 2
        loss = (b * b).mean()
        b[0] = 1000.0
        """,
    )
    result = run(path, "--target", "loss")
    assert result.exit_code == 0, result.output
    out = result.stdout
    # a stale saved tensor is shown even without --show-saved
    assert "_saved_self: b (2,) float32 cpu, 8 B, saved at version 0, now version 1" in out
    assert "backward will fail" in out.splitlines()[-1]
    assert "_saved_self_sym_sizes" not in out
    shown = run(path, "--target", "loss", "--show-saved").stdout
    assert "_saved_self_sym_sizes = (2,)" in shown and "_saved_alpha = 1" in shown
    document = run_json(path, "--target", "loss")
    mul = next(n for n in document["nodes"] if n["name"] == "MulBackward0")
    saved = {s["name"]: s for s in mul["saved"]}
    assert saved["_saved_self"]["saved_version"] == 0 and saved["_saved_self"]["current_version"] == 1
    assert saved["_saved_self"]["stale"] and saved["_saved_self"]["names"] == ["b"]
    assert document["summary"]["stale_saved"] == 2 and document["summary"]["saved_bytes"] == 8


def test_constants_and_inferred_metadata(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        inp = engine.ones([2, 2], requires_grad=False)
        w = engine.tensor(2.0, requires_grad=True)
        loss = ((inp * w).tanh() * 3).sum()
        """,
    )
    document = run_json(path)
    constants = [e["constant"] for e in document["edges"] if e["next"] is None]
    assert {
        "shape": [2, 2],
        "dtype": "float32",
        "device": "cpu",
        "names": ["inp"],
        "value": None,
    } in constants
    assert any(c["value"] == "3" and c["shape"] is None for c in constants)
    # No user name for these: read from saved tensors and what consumers recorded. Nothing
    # records the product inp * w (tanh saves only its result), so its shape and dtype are `?`.
    metas = [(n["name"], n["outputs"][0]["shape"], n["outputs"][0]["dtype"]) for n in document["nodes"]]
    assert metas == [
        ("SumBackward0", [], "float32"),
        ("MulBackward0", [2, 2], "float32"),
        ("TanhBackward0", [2, 2], "float32"),
        ("MulBackward0", None, None),
        ("AccumulateGrad", [], "float32"),
    ]
    out = run(path).stdout
    assert "MulBackward0  ? ? cpu" in out
    assert "constant  inp  (2, 2) float32 cpu  requires_grad=False" in out
    assert "constant  3  (Python number)" in out


def test_unknown_metadata_is_a_question_mark(tmp_path):
    # After backward nothing is saved any more, and nothing records exp's dtype.
    path = write(
        tmp_path,
        """
        import engine
        x = engine.ones(3, requires_grad=True)
        loss = (x.exp() + 1).sum()
        loss.backward()
        """,
    )
    out = run(path).stdout
    assert re.search(r"ExpBackward0  \(3,\) \? cpu", out), out


# -------------------------------------------------------------------------- formats


def documented_schema():
    """The JSON schema as written in gradcli/graph/render/drawing.py's docstring, parsed."""
    doc = graph_render.__doc__
    text = doc[doc.index("::") + 2 :]
    text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    tokens = re.findall(r'"[^"]*"|[{}\[\],:|]|[A-Za-z_]+', text)
    position = [0]

    def peek():
        return tokens[position[0]]

    def take(expected=None):
        token = tokens[position[0]]
        assert expected is None or token == expected, (token, expected, position[0])
        position[0] += 1
        return token

    def value():
        options = [atom()]
        while position[0] < len(tokens) and peek() == "|":
            take("|")
            options.append(atom())
        return ("union", options) if len(options) > 1 else options[0]

    def atom():
        token = take()
        if token == "{":
            fields = {}
            while peek() != "}":
                key = take()[1:-1]
                take(":")
                fields[key] = value()
                if peek() == ",":
                    take(",")
            take("}")
            return ("object", fields)
        if token == "[":
            item = value()
            take("]")
            return ("array", item)
        if token.startswith('"'):
            return ("literal", token[1:-1])
        assert token in ("str", "int", "float", "bool", "null"), token
        return ("type", token)

    schema = value()
    assert position[0] == len(tokens)
    return schema


def validate(data, schema, where="$"):
    kind, spec = schema
    if kind == "union":
        errors = []
        for option in spec:
            try:
                validate(data, option, where)
                return
            except AssertionError as exc:
                errors.append(str(exc))
        raise AssertionError(f"{where}: {data!r} matches none of {errors}")
    if kind == "object":
        assert isinstance(data, dict), f"{where}: not an object"
        assert set(data) == set(spec), f"{where}: keys {sorted(data)} != documented {sorted(spec)}"
        for key, sub in spec.items():
            validate(data[key], sub, f"{where}.{key}")
    elif kind == "array":
        assert isinstance(data, list), f"{where}: not a list"
        for i, item in enumerate(data):
            validate(item, spec, f"{where}[{i}]")
    elif kind == "literal":
        assert data == spec, f"{where}: {data!r} != {spec!r}"
    elif spec == "null":
        assert data is None, f"{where}: {data!r} is not null"
    elif spec == "bool":
        assert isinstance(data, bool), f"{where}: {data!r} is not a bool"
    elif spec == "int":
        assert isinstance(data, int) and not isinstance(data, bool), f"{where}: {data!r} is not an int"
    elif spec == "float":
        ok = isinstance(data, (int, float)) and not isinstance(data, bool)
        assert ok or data in ("nan", "inf", "-inf"), f"{where}: {data!r} is not a float"
    elif spec == "str":
        assert isinstance(data, str), f"{where}: {data!r} is not a string"


def test_the_documented_schema_parses_and_rejects_a_wrong_document(monkeypatch):
    monkeypatch.chdir(ROOT)
    schema = documented_schema()
    document = run_json("examples/expr.py")
    validate(document, schema)
    assert document["schema"] == "gradcli.graph/1" and document["depth_limit"] is None
    broken = json.loads(json.dumps(document))
    broken["nodes"][0]["level"] = "0"
    with pytest.raises(AssertionError):
        validate(broken, schema)
    del broken["nodes"][0]["level"]
    with pytest.raises(AssertionError):
        validate(broken, schema)


def test_json_ids_and_edges_are_consistent(monkeypatch):
    monkeypatch.chdir(ROOT)
    for args in (["examples/expr.py"], ["examples/model.py"]):
        document = run_json(*args)
        nodes = document["nodes"]
        assert [n["id"] for n in nodes] == list(range(len(nodes)))
        for edge in document["edges"]:
            assert nodes[edge["node"]]["kind"] == "function"
            assert (edge["next"] is None) == (edge["constant"] is not None)
        incoming = [0] * len(nodes)
        for edge in document["edges"]:
            if edge["next"] is not None:
                incoming[edge["next"]] += 1
        assert incoming == [n["consumers"] for n in nodes]
        assert document["summary"]["constants"] == sum(e["next"] is None for e in document["edges"])


def parse_dot(text: str) -> tuple[str, dict, list]:
    """A minimal parser for the DOT subset gradcli emits: a digraph of attribute statements,
    node statements `id [k=v ...]` and edge statements `a -> b [k=v ...]`, // comments."""
    token_re = re.compile(r'\s*(?://[^\n]*|"((?:[^"\\]|\\.)*)"|(->)|([\[\]{}=;,])|([A-Za-z0-9_.]+))')
    tokens = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = token_re.match(text, position)
        assert match and match.end() > position, f"cannot tokenize at {text[position : position + 30]!r}"
        position = match.end()
        quoted, arrow, punct, word = match.groups()
        if quoted is not None:
            tokens.append(
                ("str", re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), quoted))
            )
        elif arrow or punct:
            tokens.append(("op", arrow or punct))
        elif word:
            tokens.append(("id", word))
    i = 0

    def attrs():
        nonlocal i
        found = {}
        if i < len(tokens) and tokens[i] == ("op", "["):
            i += 1
            while tokens[i] != ("op", "]"):
                key = tokens[i][1]
                assert tokens[i + 1] == ("op", "=")
                found[key] = tokens[i + 2][1]
                i += 3
                if tokens[i] in (("op", ","), ("op", ";")):
                    i += 1
            i += 1
        return found

    assert tokens[0] == ("id", "digraph")
    name = tokens[1][1]
    assert tokens[2] == ("op", "{")
    i = 3
    nodes: dict = {}
    edges: list = []
    while tokens[i] != ("op", "}"):
        head = tokens[i][1]
        i += 1
        if tokens[i] == ("op", "->"):
            tail = tokens[i + 1][1]
            i += 2
            edges.append((head, tail, attrs()))
        elif head in ("graph", "node", "edge"):
            attrs()
        else:
            nodes.setdefault(head, {}).update(attrs())
        if tokens[i] == ("op", ";"):
            i += 1
    assert i == len(tokens) - 1
    return name, nodes, edges


def test_dot_output_parses_back_to_the_same_graph(monkeypatch):
    monkeypatch.chdir(ROOT)
    document = run_json("examples/expr.py")
    result = run("examples/expr.py", "--format", "dot")
    assert result.exit_code == 0, result.output
    name, nodes, edges = parse_dot(result.stdout)
    assert name == "gradcli"
    graph_nodes = {k: v for k, v in nodes.items() if k.startswith("n")}
    assert len(graph_nodes) == document["summary"]["nodes"]
    for node in document["nodes"]:
        attrs = graph_nodes[f"n{node['id']}"]
        assert attrs["tooltip"] == node["name"]
        assert node["outputs"][0]["names"][0] in attrs["label"].split("\n")
        assert attrs["fillcolor"] == ("lightblue" if node["kind"] == "leaf" else "lightgrey")
    expected = {(f"n{e['next']}", f"n{e['node']}") for e in document["edges"]}
    expected.add(("n0", "r0"))
    assert {(a, b) for a, b, _ in edges} == expected
    assert nodes["r0"]["label"] == "loss\n() float32 cpu" and nodes["r0"]["fillcolor"] == "darkolivegreen1"


def test_dot_shows_constants_and_saved_tensors(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        c = engine.ones(2)
        x = engine.ones(2, requires_grad=True)
        loss = (x * c).sum()
        """,
    )
    _, nodes, edges = parse_dot(run(path, "--format", "dot", "--show-saved").stdout)
    constants = [k for k in nodes if k.startswith("c")]
    saved = [k for k in nodes if k.startswith("s")]
    assert len(constants) == 1 and nodes[constants[0]]["label"].split("\n")[:2] == ["constant", "c"]
    # As in torch, x * c saves only c: x is not needed, since c does not require grad.
    assert len(saved) == 1 and {nodes[k]["fillcolor"] for k in saved} == {"orange"}
    assert all(attrs.get("style") == "dotted" for a, _, attrs in edges if a in saved)


def test_svg_goes_through_graphviz(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dot"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "source = sys.stdin.read()\n"
        "assert sys.argv[1:] == ['-Tsvg'] and source.lstrip('/ ').split('\\n', 2)[1].startswith('digraph')\n"
        "print('<svg><!--', len(source), '--></svg>')\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(bin_dir))
    result = run("examples/expr.py", "--format", "svg")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<svg>")
    target = tmp_path / "graph.svg"
    result = run("examples/expr.py", "--format", "svg", "--output", target)
    assert result.exit_code == 0 and target.read_text().startswith("<svg>")
    assert f"wrote {target}" in result.stderr


def test_svg_without_graphviz_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PATH", str(tmp_path))
    result = run("examples/expr.py", "--format", "svg")
    assert result.exit_code == 2
    assert result.stdout == ""
    message = result.stderr
    assert "Graphviz" in message and "apt install graphviz" in message and "--format dot" in message
    assert "Traceback" not in message


def test_output_file_and_user_prints_stay_off_machine_output(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        print("hello from the script")
        x = engine.ones(2, requires_grad=True)
        loss = (x * x).sum()
        """,
    )
    result = run(path, "--format", "json")
    assert validated(result.stdout)["roots"][0]["name"] == "loss"
    assert "hello from the script" in result.stderr
    target = tmp_path / "tree.txt"
    result = run(path, "--output", target)
    assert result.exit_code == 0 and result.stdout.startswith("hello from the script")
    assert "MulBackward0" in target.read_text() and "wrote" in result.stderr


def test_depth_limits_every_format(monkeypatch):
    monkeypatch.chdir(ROOT)
    tree = run("examples/expr.py", "--depth", "2").stdout
    assert "AddBackward0" not in tree and "... 2 inputs below (--depth)" in tree
    assert "(tree drawn 2 levels deep of 5; --depth N draws more" in tree
    document = run_json("examples/expr.py", "--depth", "2")
    assert document["truncated"] and document["depth_limit"] == 2
    assert [n["name"] for n in document["nodes"]] == ["MeanBackward0", "MulBackward0"]
    assert document["nodes"][1]["truncated"] and document["summary"]["nodes"] == 9
    _, nodes, _ = parse_dot(run("examples/expr.py", "--format", "dot", "--depth", "2").stdout)
    assert sorted(k for k in nodes if k.startswith("n")) == ["n0", "n1"]


# --------------------------------------------------------------------------- errors


def assert_usage_error(result, *needles: str) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    message = result.stderr.strip()
    assert message.startswith("error: "), message
    for needle in needles:
        assert needle in message, (needle, message)
    return message


def test_missing_file(tmp_path):
    assert_usage_error(run(tmp_path / "gone.py"), "gone.py: file not found")


def test_no_target_found(tmp_path):
    path = write(tmp_path, "import engine\nx = engine.ones(2)\ny = x * 2\n")
    assert_usage_error(run(path), f"{path}: no target found", "x, y", "--target NAME")


def test_target_that_is_not_a_tensor(tmp_path):
    path = write(tmp_path, "import engine\nx = engine.ones(2, requires_grad=True)\nn = 3\nloss = x.sum()\n")
    message = assert_usage_error(
        run(path, "--target", "n"), f"{path}:3: --target n: `n` is an int, not a tensor"
    )
    assert "tensors with a grad_fn: loss" in message and "3 | n = 3" in message


@pytest.mark.parametrize(
    "line, expected",
    [
        ("y = engine.ones(2, requires_grad=True)", "it is a leaf (requires_grad=True"),
        ("y = engine.ones(2) * 2", "it does not require grad"),
    ],
)
def test_target_without_grad_fn(tmp_path, line, expected):
    path = write(tmp_path, f"import engine\n{line}\n")
    assert_usage_error(run(path, "--target", "y"), f"{path}:2: --target y: `y` has no grad_fn", expected)


def test_unknown_target(tmp_path):
    path = write(tmp_path, "import engine\nx = engine.ones(2, requires_grad=True)\nloss = x.sum()\n")
    assert_usage_error(run(path, "--target", "nope"), "no top-level variable or case `nope`", "x, loss")


def test_file_that_raises_names_its_line_and_shows_a_traceback_only_with_debug(tmp_path):
    path = write(
        tmp_path,
        """
        import engine

        def build():
            return engine.ones(2, requires_grad=True) @ engine.ones(3)

        loss = build().sum()
        """,
    )
    message = assert_usage_error(run(path), f"{path}:4: exception while loading: RuntimeError")
    assert "--debug shows the traceback" in message
    assert len([line for line in message.splitlines() if line.strip()]) == 2  # the paragraph and the line
    debug = run_gradcli("graph", path, "--debug", traceback=True)
    assert debug.exit_code == 2 and "Traceback" in debug.stderr


def test_device_cuda_without_a_gpu(tmp_path):
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    assert_usage_error(run(EXPR, "--device", "cuda"), "--device cuda is unavailable", "CuPy")


def test_bad_option_values_are_usage_errors():
    assert run(EXPR, "--format", "gif").exit_code == 2
    assert run(EXPR, "--depth", "0").exit_code == 2


# ---------------------------------------------------------------------- big graphs


def test_a_10000_node_graph_renders_in_every_format(tmp_path):
    """No timing asserted here; docs/performance.md has the measured times."""
    path = write(
        tmp_path,
        """
        import engine
        x = engine.ones(3, requires_grad=True)
        h = x
        for _ in range(4_999):
            h = (h * 1.0001).sin()
        loss = h.sum()
        """,
    )
    assert sys.getrecursionlimit() < 10_000  # so a recursive walk would fail here
    tree = run(path, "--depth", "20")
    assert tree.exit_code == 0, tree.output
    assert "10,000 nodes (1 leaf), 4,999 constants" in tree.stdout and len(tree.stdout.splitlines()) < 40
    default = run(path)
    assert "(tree drawn 24 levels deep of 10,000, all that fit 120 columns" in default.stdout
    document = run_json(path)
    assert len(document["nodes"]) == 10_000 and document["summary"]["depth"] == 10_000
    dot = run(path, "--format", "dot")
    _, nodes, edges = parse_dot(dot.stdout)
    assert sum(k.startswith("n") for k in nodes) == 10_000
    assert len(edges) == 9_999 + 4_999 + 1  # function edges, constants, the root


def test_the_walk_is_iterative_for_very_deep_graphs():
    import engine
    from gradcli import graph as graphing

    x = engine.ones(1, requires_grad=True)
    h = x
    for _ in range(30_000):
        h = h.exp()
    graph = graphing.build_graph([("h", h)])
    assert graph.summary.nodes == 30_001 and graph.summary.depth == 30_001
    assert graph.nodes[-1].name == "AccumulateGrad"
    assert graph_render.tree_lines(graph, depth=5)[-1][-1][0].startswith("... 1 input below")


def test_ascii_guides_where_the_console_cannot_encode_box_drawing():
    import engine
    from gradcli import graph as graphing

    x = engine.ones(2, requires_grad=True)
    graph = graphing.build_graph([("loss", (x * x).sum())])
    lines = graph_render.tree_lines(graph, ascii_only=True)
    text = "\n".join("".join(chunk for chunk, _ in line) for line in lines)
    assert (
        "`-- MulBackward0" in text and "|-- AccumulateGrad" in text and not re.search(r"[^\x00-\x7f]", text)
    )
