"""Tensor repr, following torch/_tensor_str.py so printed values read exactly like PyTorch's."""

from __future__ import annotations

import math

import numpy

from . import backend

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


class _Formatter:
    """Chooses int / fixed / scientific mode and a common width, as torch's _Formatter."""

    def __init__(self, values: numpy.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[numpy.isfinite(flat) & (flat != 0)].astype(numpy.float64)
        if finite.size == 0:
            return
        absolute = numpy.abs(finite)
        lo, hi = absolute.min(), absolute.max()
        self.int_mode = bool((finite == numpy.ceil(finite)).all())
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                widths = [len(f"{v:.{PRECISION}e}") for v in finite.tolist()]
            else:
                widths = [len(f"{v:.0f}") + 1 for v in finite.tolist()]
        elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
            self.sci_mode = True
            widths = [len(f"{v:.{PRECISION}e}") for v in finite.tolist()]
        else:
            widths = [len(f"{v:.{PRECISION}f}") for v in finite.tolist()]
        self.max_width = max(self.max_width, *widths)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRECISION}f}"
        else:
            text = str(value)
        return (self.max_width - len(text)) * " " + text


def _summarized(values: numpy.ndarray) -> numpy.ndarray:
    """Only the edge items of each dimension, for choosing widths of a summarized print."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * EDGEITEMS:
        values = numpy.concatenate([values[:EDGEITEMS], values[-EDGEITEMS:]])
    if values.ndim == 1:
        return values
    return numpy.stack([_summarized(v) for v in values])


def _vector(values, indent, summarize, fmt) -> str:
    element_length = fmt.width() + 2
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / element_length)))
    items = values.tolist()
    if summarize and len(items) > 2 * EDGEITEMS:
        data = (
            [fmt.format(v) for v in items[:EDGEITEMS]]
            + [" ..."]
            + [fmt.format(v) for v in items[-EDGEITEMS:]]
        )
    else:
        data = [fmt.format(v) for v in items]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(values, indent, summarize, fmt) -> str:
    dim = values.ndim
    if dim == 0:
        return fmt.format(values.item())
    if dim == 1:
        return _vector(values, indent, summarize, fmt)
    n = values.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        parts = (
            [_tensor_str(values[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)]
            + ["..."]
            + [_tensor_str(values[i], indent + 1, summarize, fmt) for i in range(n - EDGEITEMS, n)]
        )
    else:
        parts = [_tensor_str(values[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(parts) + "]"


def _add_suffixes(text, suffixes, indent) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def values_str(values: numpy.ndarray, dtype, indent: int) -> str:
    summarize = values.size > THRESHOLD
    fmt = _Formatter(_summarized(values) if summarize else values, dtype.is_floating_point)
    return _tensor_str(values, indent, summarize, fmt)


def tensor_repr(t, prefix: str = "tensor(") -> str:
    values = backend.to_numpy(backend.to_device(t._values(), backend.CPU))
    indent = len(prefix)
    suffixes = []
    dtype = t.dtype
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if values.size == 0 and values.ndim != 1:
        body = "[]"
        suffixes.append(f"size={tuple(values.shape)}")
    elif values.size == 0:
        body = "[]"
    else:
        body = values_str(values, dtype, indent)
    if dtype not in (backend.get_default_dtype(), backend.int64, backend.bool_):
        suffixes.append(f"dtype={dtype!r}")
    fn = _grad_fn_shown(t)
    if fn is not None:
        suffixes.append(f"grad_fn=<{fn}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)


def _grad_fn_shown(t) -> str | None:
    """The grad_fn's class name, or None; `Invalid` for a view whose grad_fn may not be read (torch's repr)."""
    try:
        fn = t.grad_fn
    except RuntimeError:
        return "Invalid"
    return None if fn is None else type(fn).__name__
