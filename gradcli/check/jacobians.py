"""The Jacobians of failing pairs as files: `check --dump FILE.npz` and `check --plot DIR`.

Keys and file names say which Jacobian: `<case>/<output>/<input>`, rows output entries and
columns input entries (row-major), as the checker compared them. A case name found in two
files is written `<file>::<case>`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterator

from ..program.exception_text import exception_text
from ..render.error import UsageError
from ..render.output_files import written
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
    with written(path, "--dump") as file:
        numpy.savez_compressed(file, **arrays)
    return len(arrays) // 2


def require_matplotlib() -> None:
    """Exit 2 before any case runs when --plot cannot draw."""
    _pyplot()


def _pyplot():  # noqa: ANN202 - matplotlib.pyplot, imported only here
    """matplotlib's pyplot on the Agg backend; one that is missing or fails to import is a UsageError."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError(PLOT_MISSING) from None
    except Exception as exc:  # a broken install: its own error, whatever its type
        raise UsageError(f"--plot needs matplotlib, which failed to import: {exception_text(exc)}") from None
    return plt


#: The PNG shows every entry up to this many per side; a larger Jacobian is drawn in blocks (each its max).
PNG_MAX_CELLS = 2000


def plot(folder: str, results: list[CaseResult]) -> list[str]:
    """A PNG heatmap of |analytical - numerical| per failing pair; the files written."""
    import numpy

    plt = _pyplot()

    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--plot {folder}: {exc.strerror or exc}") from None
    paths = []
    pairs = list(failing_pairs(results))
    names = file_names([key for key, _ in pairs])
    for (key, pair), name in zip(pairs, names):
        from .jacobian_blocks import block_max, block_shape

        difference = numpy.abs(pair.analytical_jacobian - pair.numerical_jacobian)
        difference = block_max(difference, block_shape(difference.shape, PNG_MAX_CELLS, PNG_MAX_CELLS))
        figure, axes = plt.subplots(figsize=(6, 5))
        image = axes.imshow(difference, cmap="magma", interpolation="nearest", aspect="auto")
        figure.colorbar(image, ax=axes, label="|analytical - numerical|")
        axes.set_title(f"{key}: {pair.mismatch_count} entries differ")
        axes.set_xlabel(f"{pair.input} entry (row-major, shape {tuple(pair.input_shape)})")
        axes.set_ylabel(f"{pair.output} entry (row-major, shape {tuple(pair.output_shape)})")
        path = os.path.join(folder, name + ".png")
        try:
            with written(path, "--plot") as file:
                figure.savefig(file, format="png", dpi=100, bbox_inches="tight")
        finally:
            plt.close(figure)
        paths.append(path)
    return paths


#: The longest PNG name, before its suffix: well under the 255 bytes file systems allow.
NAME_MAX = 120


def file_names(keys: list[str]) -> list[str]:
    """A PNG name per key, unique and the same on every run: `linear/out/weight` ->
    `linear-out-weight`, any character a file name could trip on as `_`, at most NAME_MAX long.
    A name that lost something (a character replaced, a cut), or that two keys share, ends with a
    digest of its key, so keys that read alike never overwrite each other's file."""
    plain = [key.replace("/", "-") for key in keys]
    safe = [re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.")[:NAME_MAX] or "pair" for name in plain]
    shared = Counter(name for name, whole in zip(safe, plain) if name == whole)
    return [
        name if name == whole and shared[name] == 1 else f"{name}-{_digest(key)}"
        for key, whole, name in zip(keys, plain, safe)
    ]


def _digest(key: str) -> str:
    return hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]
