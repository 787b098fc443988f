"""Type promotion of elementwise ops follows torch (by category, in tiers), not numpy.

The module under test is ENGINE_MODULE ("engine" by default); ENGINE_MODULE=torch runs the
same expectations against PyTorch itself.
"""

import os

import pytest

torch = pytest.importorskip(os.environ.get("ENGINE_MODULE", "engine"))

f32, f64, i64, b = "float32", "float64", "int64", "bool"


def t(dtype, dims=True):
    values = [1, 2] if dims else 2
    if dtype == b:
        return torch.tensor([True, False] if dims else True)
    return torch.tensor(values, dtype=getattr(torch, dtype))


CASES = [
    # (expression, expected dtype)
    ("float32 + int64 tensors: the float wins", lambda: t(f32) + t(i64), f32),
    ("int64 + float32", lambda: t(i64) + t(f32), f32),
    ("float32 * 0-dim float64: a 0-dim tensor does not widen", lambda: t(f32) * t(f64, dims=False), f32),
    ("int64 * 0-dim float64: but it raises the category", lambda: t(i64) * t(f64, dims=False), f64),
    ("float32 - float64, both with dims", lambda: t(f32) - t(f64), f64),
    ("bool + float32", lambda: t(b) + t(f32), f32),
    ("bool + int64", lambda: t(b) + t(i64), i64),
    ("int64 * Python float: the default dtype", lambda: t(i64) * 2.5, f32),
    ("bool * Python float", lambda: t(b) * 2.5, f32),
    ("bool + Python int", lambda: t(b) + 1, i64),
    ("float32 * 0-dim int64", lambda: t(f32) * t(i64, dims=False), f32),
    ("int64 / int64: true division in the default dtype", lambda: t(i64) / t(i64), f32),
    ("Python int / int64", lambda: 2 / t(i64), f32),
    ("reciprocal of int64", lambda: torch.reciprocal(t(i64)), f32),
    ("int64 ** float32", lambda: t(i64) ** t(f32), f32),
    ("where(bool, float32, int64)", lambda: torch.where(t(b), t(f32), t(i64)), f32),
    ("maximum(float64, int64)", lambda: torch.maximum(t(f64), t(i64)), f64),
    ("clamp(int64, min=float32)", lambda: torch.clamp(t(i64), min=t(f32)), f32),
]


@pytest.mark.parametrize("expression, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_result_dtype(expression, expected):
    assert expression().dtype == getattr(torch, expected)


def test_gradients_come_back_in_each_inputs_dtype():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    y = x * s
    assert y.dtype == torch.float32
    y.sum().backward()
    assert x.grad.dtype == torch.float32 and s.grad.dtype == torch.float64
    assert x.grad.tolist() == [3.0, 3.0] and s.grad.item() == 3.0


def test_in_place_keeps_the_destinations_dtype():
    x = torch.tensor([1.0, 2.0])
    x.add_(torch.tensor([1, 2]))
    assert x.dtype == torch.float32 and x.tolist() == [2.0, 4.0]
