"""torch's checks of batched gradients: check_batched_grad (_test_batched_grad) and
check_batched_forward_grad (_test_batched_grad_forward_ad).

Two random vectors give two gradients one at a time; the same two, stacked, go through
engine.func.vmap at once, and must give the same gradients (allclose at torch's defaults). The
vectors are grad_outputs for reverse mode, tangents for forward mode. A RuntimeError under vmap
(an op without a batching rule, `.item()` or data-dependent control flow in a backward) fails
the check with its text. The vectors come from a generator of their own, so the user's random
state is untouched and reruns agree.
"""

from __future__ import annotations

from typing import Any

import numpy

from ...func.vmap import legacy_vmap
from ...ops.creation import tensor, zeros
from ...ops.pointwise.functions import allclose
from ...ops.shaping.core import stack
from ..backward import grad
from ..forward_ad import dual_level, make_dual, unpack_dual
from .messages import batched_grad_error, batched_grad_mismatch
from .state import CheckState
from .util import FAST_MODE_SEED, as_tuple


def _random_like(rng: numpy.random.Generator, x: Any) -> Any:
    return tensor(rng.standard_normal(tuple(x.shape)), dtype=x.dtype, device=x.device)


def _zeros_like_expanded(x: Any) -> Any:
    """torch's stand-in for a missing gradient: a zero expanded to x's shape."""
    return zeros([], dtype=x.dtype, device=x.device).expand(x.shape)


def _compare_batched(state: CheckState, vjp, vectors: list, output_idx: int | None, forward: bool) -> None:
    """`vjp` of each vector against vmap(vjp) of them stacked; output_idx None: torch's forward-mode
    message, which names the output's index for both output and input."""
    expected = [stack(list(shards)) for shards in zip(*(vjp(v) for v in vectors))]
    try:
        result = legacy_vmap(vjp)(stack(vectors))
    except RuntimeError as exc:
        state.fail(batched_grad_error(exc, forward))
        return
    for idx, (res, exp) in enumerate(zip(result, expected)):
        if not allclose(res, exp):
            state.fail(
                batched_grad_mismatch(idx if output_idx is None else output_idx, idx, res, exp, forward)
            )


def check_batched_grad(state: CheckState, out_rank: int) -> None:
    """Gradients of one output for a batch of grad_outputs, through vmap, against one by one."""
    output = state.outputs[out_rank][1]
    diff = [t for _, t in state.diff_inputs]

    def vjp(v):
        grads = grad(output, diff, v, retain_graph=True, allow_unused=True)
        return tuple(_zeros_like_expanded(t) if g is None else g for g, t in zip(grads, diff))

    rng = numpy.random.default_rng(FAST_MODE_SEED)
    _compare_batched(state, vjp, [_random_like(rng, output) for _ in range(2)], out_rank, forward=False)


def check_batched_forward_grad(state: CheckState) -> None:
    """Forward mode's tangents of every output for a batch of tangents of one input at a time."""
    inputs = state.inputs
    rng = numpy.random.default_rng(FAST_MODE_SEED)
    for input_idx, current in enumerate(inputs):
        if not (state.tensors.is_tensor(current) and current.requires_grad):
            continue

        def jvp(tangent, input_idx=input_idx, current=current):
            with dual_level():
                dual = make_dual(current.detach(), tangent)
                with_dual = tuple(
                    dual if idx == input_idx else (inp.detach() if state.tensors.is_tensor(inp) else inp)
                    for idx, inp in enumerate(inputs)
                )
                found = []
                for out in as_tuple(state.func(*with_dual)):
                    if out is None:
                        continue
                    primal, tangent_out = unpack_dual(out)
                    found.append(_zeros_like_expanded(primal) if tangent_out is None else tangent_out)
                return tuple(found)

        if not (current.dtype.is_floating_point or current.dtype.is_complex):
            continue
        _compare_batched(state, jvp, [_random_like(rng, current) for _ in range(2)], None, forward=True)
