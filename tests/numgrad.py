"""Finite-difference gradient checks (test helper, not a test module).

Written purely against the torch autograd API so that the same code runs
against the engine and, to validate the expectations themselves, against real
PyTorch: the module is chosen by the ENGINE_MODULE environment variable
("engine" by default, "torch" for validation).

All reference values come from central differences in float64 computed on the
tensors' storage through ``t.detach().numpy()`` (which shares memory with the
tensor; on a GPU, through the detached tensor itself, written under no_grad), so
the autograd machinery under test never produces its own reference.
"""

import os

import numpy as np
import pytest

torch = pytest.importorskip(os.environ.get("ENGINE_MODULE", "engine"))


def _flat(t):
    """Float64 flat numpy copy of a tensor's values.

    clone() first: torch may return a lazy ZeroTensor (e.g. abs's second
    derivative) that refuses .numpy(); a clone is an ordinary tensor.
    """
    return np.array(t.detach().clone().cpu().numpy(), dtype=np.float64).reshape(-1)


def _randn_like(t, rng):
    """Random float64 tensor with ``t``'s shape (used as v / w in the checks)."""
    return torch.tensor(np.asarray(rng.standard_normal(tuple(t.shape)), dtype=np.float64))


def _central_diff(f, inputs, eps):
    """Jacobians (one per input) of the flat float64 array ``f()`` by central differences.

    Each element is perturbed in place through the numpy view of the input,
    evaluated at +eps and -eps, and restored exactly afterwards.
    """
    jacs = []
    for t in inputs:
        arr = _storage(t)
        cols = []
        for idx in np.ndindex(tuple(arr.shape)):
            orig = arr[idx] * 1  # a copy, numpy scalar or 0-d tensor
            _write(arr, idx, orig + eps)
            plus = f()
            _write(arr, idx, orig - eps)
            minus = f()
            _write(arr, idx, orig)
            cols.append((plus - minus) / (2 * eps))
        jacs.append(np.stack(cols, axis=1))
    return jacs


def _storage(t):
    """Where to perturb ``t`` in place: its numpy view on the CPU, else a detached alias (GPU)."""
    return t.detach().numpy() if t.device.type == "cpu" else t.detach()


def _write(storage, idx, value):
    with torch.no_grad():  # a detached alias: an in-place write outside any graph
        storage[idx] = value


def numerical_jacobian(fn, inputs, eps=1e-6):
    """d fn(*inputs) / d input, as a (out.numel(), input.numel()) array per input."""

    def f():
        with torch.no_grad():  # reference values need no graph
            return _flat(fn(*inputs))

    return _central_diff(f, inputs, eps)


def _grads(out, inputs, v, **kw):
    """autograd.grad with unused inputs allowed (they get None)."""
    return torch.autograd.grad(out, inputs, grad_outputs=v, allow_unused=True, **kw)


def check_grad(fn, *inputs, atol=1e-6, rtol=1e-5, eps=1e-6):
    """First order: the vector-Jacobian product from autograd equals ``v @ J``."""
    rng = np.random.default_rng(1234)
    out = fn(*inputs)
    v = _randn_like(out, rng)
    grads = _grads(out, inputs, v)
    for t, g, jac in zip(inputs, grads, numerical_jacobian(fn, inputs, eps)):
        expected = _flat(v) @ jac
        if g is None:  # unused input: its gradient must be zero
            actual = np.zeros_like(expected)
        else:
            assert tuple(g.shape) == tuple(t.shape) and g.dtype == t.dtype
            actual = _flat(g)
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def check_gradgrad(fn, *inputs, atol=1e-5, rtol=1e-4, eps=1e-6):
    """Second order: differentiate the (create_graph=True) first gradient.

    With random v and w_i, s(x) = sum_i <grad_i(x; v), w_i> is a scalar; its
    autograd gradient is compared with central differences of s, where s itself
    is evaluated with first-order autograd at perturbed inputs. If no first
    gradient requires grad (e.g. a linear fn), the second derivative must be 0.
    """
    rng = np.random.default_rng(4321)
    out = fn(*inputs)
    v = _randn_like(out, rng)
    ws = [_randn_like(t, rng) for t in inputs]

    grads = _grads(out, inputs, v, create_graph=True)
    terms = [(g * w).sum() for g, w in zip(grads, ws) if g is not None]
    if any(term.requires_grad for term in terms):
        second = _grads(sum(terms), inputs, None)
    else:
        second = [None] * len(inputs)

    def s():
        gs = _grads(fn(*inputs), inputs, v)
        return np.array([sum(_flat(g) @ _flat(w) for g, w in zip(gs, ws) if g is not None)])

    for h, jac in zip(second, _central_diff(s, inputs, eps)):
        expected = jac[0]
        actual = np.zeros_like(expected) if h is None else _flat(h)
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)
