"""`gradcli graph --format html`: one self-contained page, no network.

The SVG that Graphviz laid out is inlined, with the `gradcli.graph/1` JSON document and the
node -> nn.Module map as `application/json` script blocks, and the page's CSS and JS
(`assets/graph_page.js`: pan/zoom on the SVG's viewBox, search by name, a click on a node
shows the forward line that made it, its outputs, module, hooks and saved tensors) inlined too, so the file opens anywhere.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from typing import Any

from .. import Graph

STYLE = """
body { margin: 0; font: 13px monospace; display: flex; height: 100vh; }
#main { flex: 1; display: flex; flex-direction: column; min-width: 0; }
#bar { padding: 6px; border-bottom: 1px solid #ccc; display: flex; gap: 8px; align-items: center; }
#canvas { flex: 1; overflow: hidden; }
#canvas svg { width: 100%; height: 100%; cursor: grab; }
#details { width: 360px; overflow: auto; padding: 8px; border-left: 1px solid #ccc; }
#details .stale { color: #b00; font-weight: bold; }
#details pre.code { background: #f4f4f4; padding: 4px; white-space: pre-wrap; }
g.node { cursor: pointer; }
g.node.match polygon { stroke: #d40; stroke-width: 3; }
g.node.dimmed { opacity: 0.3; }
g.node.selected polygon { stroke: #06c; stroke-width: 3; }
"""


def html_page(graph: Graph, svg: str, document: dict[str, Any], *, modules: dict[int, str]) -> str:
    """The page: inline SVG, the graph's JSON, the module map, CSS and JS."""
    script = (
        resources.files("gradcli.graph.render").joinpath("assets/graph_page.js").read_text(encoding="utf-8")
    )
    svg = re.sub(r"^.*?(?=<svg)", "", svg, flags=re.S)  # drop the XML prolog and doctype
    title = html.escape(f"gradcli graph {graph.file}")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{STYLE}</style></head>
<body>
<div id="main">
<div id="bar"><input id="search" type="search" placeholder="search by name (l4, MulBackward0, model.0)">
<span id="matches"></span><button id="reset">reset view</button>
<span>{html.escape(graph.file)}</span></div>
<div id="canvas">{svg}</div>
</div>
<div id="details"><p>Click a node for the line that made it, its outputs, hooks and saved tensors. Wheel: zoom, drag: pan.</p></div>
<script type="application/json" id="graph-data">{_script_json(document)}</script>
<script type="application/json" id="graph-modules">{_script_json({str(k): v for k, v in modules.items()})}</script>
<script>{script}</script>
</body></html>
"""


def _script_json(data: Any) -> str:
    """JSON safe inside <script>: `</` cannot close the element."""
    return json.dumps(data).replace("</", "<\\/")
