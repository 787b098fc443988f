// gradcli graph --format html: pan/zoom, search by name, a node's details on click. No network.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("graph-data").textContent);
  const modules = JSON.parse(document.getElementById("graph-modules").textContent);
  const svg = document.querySelector("#canvas svg");
  const details = document.getElementById("details");
  const byId = new Map(data.nodes.map((n) => [n.id, n]));
  const view = svg.viewBox.baseVal;
  const full = { x: view.x, y: view.y, w: view.width, h: view.height };
  svg.removeAttribute("width");
  svg.removeAttribute("height");

  function nodeOf(g) {
    const title = g.querySelector("title");
    const m = title && /^n(\d+)$/.exec(title.textContent.trim());
    return m ? byId.get(Number(m[1])) : undefined;
  }
  const groups = Array.from(svg.querySelectorAll("g.node")).filter((g) => nodeOf(g));

  // pan and zoom through the viewBox
  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    const box = svg.getBoundingClientRect();
    const fx = (event.clientX - box.left) / box.width, fy = (event.clientY - box.top) / box.height;
    const k = event.deltaY < 0 ? 0.85 : 1 / 0.85;
    const w = view.width * k, h = view.height * k;
    view.x += (view.width - w) * fx; view.y += (view.height - h) * fy;
    view.width = w; view.height = h;
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (event) => { drag = { x: event.clientX, y: event.clientY, moved: false }; });
  window.addEventListener("pointerup", () => { setTimeout(() => { drag = null; }, 0); });
  svg.addEventListener("pointermove", (event) => {
    if (!drag || event.buttons === 0) return;
    const box = svg.getBoundingClientRect();
    const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
    view.x -= dx * view.width / box.width; view.y -= dy * view.height / box.height;
    drag.x = event.clientX; drag.y = event.clientY;
  });
  document.getElementById("reset").addEventListener("click", () => {
    view.x = full.x; view.y = full.y; view.width = full.w; view.height = full.h;
  });

  // search by name: the node's class or the user's names
  function names(node) {
    return [node.name].concat(...node.outputs.map((o) => o.names)).join(" ").toLowerCase();
  }
  const search = document.getElementById("search");
  const count = document.getElementById("matches");
  search.addEventListener("input", () => {
    const q = search.value.trim().toLowerCase();
    let hits = 0;
    for (const g of groups) {
      const hit = q !== "" && names(nodeOf(g)).includes(q);
      g.classList.toggle("match", hit);
      g.classList.toggle("dimmed", q !== "" && !hit);
      hits += hit ? 1 : 0;
    }
    count.textContent = q === "" ? "" : hits + (hits === 1 ? " match" : " matches");
  });

  // details on click
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function shape(t) {
    return (t.shape === null ? "?" : "(" + t.shape.join(", ") + (t.shape.length === 1 ? ",)" : ")")) +
      " " + (t.dtype || "?") + " " + (t.device || "?");
  }
  function show(node) {
    details.replaceChildren();
    details.appendChild(el("h2", node.name + "  #" + node.id));
    for (const mark of data.marks || []) {
      if (mark.node === node.id) details.appendChild(el("p", mark.text, "stale"));
    }
    if (modules[node.id] !== undefined) details.appendChild(el("p", "module: " + modules[node.id]));
    const line = node.forward_line;
    if (line) {
      details.appendChild(el("p", "made at " + line.file + ":" + line.line));
      if (line.code !== null) details.appendChild(el("pre", line.code, "code"));
    }
    const outs = el("ul");
    for (const o of node.outputs) {
      outs.appendChild(el("li", (o.names.length ? o.names.join(", ") + ": " : "") + shape(o) +
        (o.retains_grad ? "  retains_grad" : "")));
    }
    details.appendChild(el("h3", "output")); details.appendChild(outs);
    if (node.leaf) {
      details.appendChild(el("p", "leaf: requires_grad=" + node.leaf.requires_grad + " grad=" +
        (node.leaf.has_grad ? "norm " + node.leaf.grad_norm : "None")));
    }
    const h = node.hooks;
    details.appendChild(el("p", "hooks: " + h.pre + " pre, " + h.post + " post, " + h.tensor + " tensor"));
    details.appendChild(el("h3", "saved (" + node.saved.length + ")" + (node.saved_freed ? ", freed by a backward" : "")));
    const saved = el("ul");
    for (const s of node.saved) {
      const text = s.kind === "value" ? s.name + " = " + s.value :
        s.name + ": " + (s.names.length ? s.names.join(", ") + " " : "") + shape(s) + ", " + s.bytes +
        " B, version " + s.saved_version + (s.stale ? " now " + s.current_version + ": modified in place" : "");
      saved.appendChild(el("li", text, s.stale ? "stale" : undefined));
    }
    details.appendChild(saved);
    for (const g of groups) g.classList.toggle("selected", nodeOf(g) === node);
  }
  for (const g of groups) {
    g.addEventListener("click", (event) => {
      if (drag && drag.moved) return;
      event.preventDefault();
      show(nodeOf(g));
    });
  }
  document.body.dataset.ready = "true";
})();
