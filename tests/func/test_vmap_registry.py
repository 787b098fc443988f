"""vmap over the registry: every sample, batched, equals its examples stacked (a row without a batching
rule through the per-element fallback)."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import make_arrays
from ops.checks import first_float, tensors
from ops.registry import REGISTRY

import engine
from engine.func import vmap

BATCH = 3


SAMPLES = [
    pytest.param(sample, id=op.sample_id(sample))
    for op in REGISTRY
    for sample in op.samples
    if any(np.issubdtype(a.dtype, np.floating) for a in make_arrays(sample.kinds))
]


def _examples(sample) -> tuple[list, list]:
    """BATCH examples of the sample's inputs (floats drawn per example, ints and bools shared), and in_dims."""
    draws = [make_arrays(sample.kinds, seed) for seed in range(BATCH)]
    floating = [np.issubdtype(a.dtype, np.floating) for a in draws[0]]
    examples = [[d if f else draws[0][i] for i, (d, f) in enumerate(zip(draw, floating))] for draw in draws]
    return examples, [0 if f else None for f in floating]


def _call(sample):
    return lambda *xs: first_float(sample.call(engine, *xs))


def _expected(sample, examples) -> np.ndarray:
    return np.stack([_call(sample)(*tensors(engine, arrays)).detach().numpy() for arrays in examples])


def _stacked(examples, in_dims, axis: int = 0) -> list:
    return [
        np.stack([arrays[i] for arrays in examples], axis) if d is not None else examples[0][i]
        for i, d in enumerate(in_dims)
    ]


def _batched(run):
    """run(): the batched result; a refusal (torch's vmap errors, or a row without a rule further in the
    sample's call) skips, naming it: never a wrong result."""
    try:
        return run()
    except RuntimeError as error:
        if not str(error).startswith("vmap: "):
            raise
        pytest.skip(str(error)[:120])


def _batch(arrays) -> list:
    """The batched inputs, free of graph: vmap runs each op through its batching rule (inputs that require
    grad would take the per-example path, test_composed_transforms.py)."""
    return [t.detach() for t in tensors(engine, arrays)]


def _assert_batched(sample, out, expected) -> None:
    assert out.dtype == engine.float64 or not np.issubdtype(expected.dtype, np.floating)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sample", SAMPLES)
def test_vmap_equals_the_stacked_examples(sample):
    examples, in_dims = _examples(sample)
    inputs = _batch(_stacked(examples, in_dims))
    out = _batched(lambda: vmap(_call(sample), in_dims=tuple(in_dims))(*inputs))
    _assert_batched(sample, out, _expected(sample, examples))


@pytest.mark.parametrize("sample", SAMPLES)
def test_vmap_with_the_batch_dim_last_and_out_dims_last(sample):
    examples, in_dims = _examples(sample)
    last = tuple(-1 if d is not None else None for d in in_dims)
    inputs = _batch(_stacked(examples, in_dims, axis=-1))
    out = _batched(lambda: vmap(_call(sample), in_dims=last, out_dims=-1)(*inputs))
    _assert_batched(sample, out, np.moveaxis(_expected(sample, examples), 0, -1))


@pytest.mark.parametrize("sample", SAMPLES[::7])
def test_nested_vmap_equals_the_examples(sample):
    examples, in_dims = _examples(sample)
    pairs = [examples, [make_arrays(sample.kinds, seed + BATCH) for seed in range(BATCH)]]
    for i, d in enumerate(in_dims):  # shared inputs stay shared in both levels
        if d is None:
            for arrays in pairs[1]:
                arrays[i] = examples[0][i]
    nested = [
        np.stack([np.stack([arrays[i] for arrays in level]) for level in pairs])
        if d is not None
        else examples[0][i]
        for i, d in enumerate(in_dims)
    ]
    inner = vmap(_call(sample), in_dims=tuple(in_dims))
    inputs = _batch(nested)
    out = _batched(lambda: vmap(inner, in_dims=tuple(in_dims))(*inputs))
    _assert_batched(sample, out, np.stack([_expected(sample, level) for level in pairs]))
