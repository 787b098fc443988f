"""The Jacobians of failing pairs as files: `check --dump FILE.npz` and `check --plot DIR`.

Keys and file names say which Jacobian: `<case>/<output>/<input>`, rows output entries and
columns input entries (row-major), as the checker compared them. A case name found in two
files is written `<file>::<case>`.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator

from ..render.error import UsageError
from .results import CaseResult, PairResult

PLOT_MISSING = "--plot needs matplotlib: pip install 'gradcli[plot]'"


def failing_pairs(results: list[CaseResult]) -> Iterator[tuple[str, PairResult]]:
    """(`<case>/<output>/<input>`, pair) for each pair that kept its Jacobians."""
    names = Counter(r.name for r in results)
    for result in results:
        case = result.name if names[result.name] == 1 else f"{result.file}::{result.name}"
        for pair in result.pairs:
            if pair.numerical_jacobian is not None and pair.analytical_jacobian is not None:
                yield f"{case}/{pair.output}/{pair.input}", pair


def dump(path: str, results: list[CaseResult]) -> int:
    """Write `<key>/numerical` and `<key>/analytical` for every failing pair; how many pairs."""
    import numpy

    arrays = {}
    for key, pair in failing_pairs(results):
        arrays[f"{key}/numerical"] = pair.numerical_jacobian
        arrays[f"{key}/analytical"] = pair.analytical_jacobian
    try:
        with open(path, "wb") as file:
            numpy.savez_compressed(file, **arrays)
    except OSError as exc:
        raise UsageError(f"--dump {path}: {exc.strerror or exc}") from None
    return len(arrays) // 2


def require_matplotlib() -> None:
    """Exit 2 before any case runs when --plot cannot draw."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(PLOT_MISSING) from None


#: The PNG shows every entry up to this many per side; a larger Jacobian is drawn in blocks (each its max).
PNG_MAX_CELLS = 2000


def plot(folder: str, results: list[CaseResult]) -> list[str]:
    """A PNG heatmap of |analytical - numerical| per failing pair; the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy

    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--plot {folder}: {exc.strerror or exc}") from None
    written = []
    for key, pair in failing_pairs(results):
        from .jacobian_blocks import block_max, block_shape

        difference = numpy.abs(pair.analytical_jacobian - pair.numerical_jacobian)
        difference = block_max(difference, block_shape(difference.shape, PNG_MAX_CELLS, PNG_MAX_CELLS))
        figure, axes = plt.subplots(figsize=(6, 5))
        image = axes.imshow(difference, cmap="magma", interpolation="nearest", aspect="auto")
        figure.colorbar(image, ax=axes, label="|analytical - numerical|")
        axes.set_title(f"{key}: {pair.mismatch_count} entries differ")
        axes.set_xlabel(f"{pair.input} entry (row-major, shape {tuple(pair.input_shape)})")
        axes.set_ylabel(f"{pair.output} entry (row-major, shape {tuple(pair.output_shape)})")
        path = os.path.join(folder, _file_name(key) + ".png")
        figure.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(figure)
        written.append(path)
    return written


def _file_name(key: str) -> str:
    """`linear/out/weight` -> `linear-out-weight`, any character a file name could trip on as `_`."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", key.replace("/", "-")).strip("_") or "pair"
