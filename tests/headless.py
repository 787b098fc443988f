"""An HTML page in headless Chromium, for the tests of gradcli's HTML output: scripts put around it
record what a test asks, and leave it as JSON in `<pre id="__result">`, which Chromium's DOM dump shows."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None, reason="chromium is not installed (apt install chromium)"
)


#: Put first in the page's <head>: every error and console.error from the first script on.
RECORD_ERRORS = """<script>window.__errors = []; window.addEventListener("error", e => __errors.push(String(e.message)));
const __error = console.error; console.error = (...a) => { __errors.push(a.join(" ")); __error(...a); };</script>"""


def clicking(picks: str, then: str = "", **fields: str) -> str:
    """The script put last in the page's <body>: once its own scripts ran, a click on the first
    `g.node` for which the JS expression `picks` (of `g`) is true, then `then`; the result is
    {errors, ready, details, title: the clicked node's, and `fields` (JS expressions)}."""
    extra = "".join(f", {name}: {value}" for name, value in fields.items())
    return f"""<script>setTimeout(() => {{
const g = [...document.querySelectorAll("g.node")].find(g => {picks});
g.dispatchEvent(new MouseEvent("click", {{bubbles: true}}));
{then}
const out = document.createElement("pre"); out.id = "__result";
out.textContent = JSON.stringify({{errors: __errors, ready: document.body.dataset.ready,
  details: document.getElementById("details").innerText, title: g.querySelector("title").textContent{extra}}});
document.body.appendChild(out); }}, 100);</script>"""


def page_result(page: str, folder: Path, tail: str) -> dict[str, Any]:
    """Load `page` with `RECORD_ERRORS` first in its <head> and `tail` (`clicking`) last in its
    <body>; what `tail` left."""
    head = RECORD_ERRORS
    probe = folder / "probe.html"
    probe.write_text(page.replace("<head>", "<head>" + head, 1).replace("</body>", tail + "</body>", 1))
    done = subprocess.run(
        ["chromium", "--headless", "--disable-gpu", "--no-sandbox", "--virtual-time-budget=3000", "--dump-dom",
         probe.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    found = re.search(r'<pre id="__result">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">"))
