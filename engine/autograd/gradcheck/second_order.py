"""gradgradcheck's problem: a function of (inputs, grad_outputs) returning the first-order grads.

Checking that function with gradcheck checks the double backward. Random grad_outputs
(uniform in [-1, 1), requiring grad) come from a fixed-seed generator, so the user's
random state is untouched and reruns agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

from .tensors import ENGINE, Tensors
from .util import as_tuple, differentiable_outputs

_GRAD_OUTPUTS_SEED = 0


def gradgrad_problem(
    func: Callable, inputs: tuple, grad_outputs: Any, non_contiguous: bool, tensors: Tensors = ENGINE
):
    """torch's construction: a function of (inputs, grad_outputs) returning first-order grads."""
    if grad_outputs is None:
        with tensors.enable_grad():
            outputs = differentiable_outputs(tensors, func(*inputs))
        rng = numpy.random.default_rng(_GRAD_OUTPUTS_SEED)
        grad_outputs = tuple(_random_like(tensors, o, rng, non_contiguous) for o in outputs)
    else:
        grad_outputs = as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    diff_positions = [i for i, a in enumerate(inputs) if tensors.is_tensor(a) and a.requires_grad]
    restored = {k for k, a in enumerate((*inputs, *grad_outputs)) if tensors.is_tensor(a) and a.requires_grad}

    def first_order_grads(*args):
        # requires_grad restored, as torch's gradgradcheck does: forward mode passes dual tensors,
        # detached copies of the inputs and grad_outputs
        args = tuple(
            a.requires_grad_() if tensors.is_tensor(a) and k in restored else a for k, a in enumerate(args)
        )
        with tensors.enable_grad():  # the numerical forwards run under no_grad otherwise
            input_args = args[: len(args) - num_outputs]
            outputs = differentiable_outputs(tensors, func(*input_args))
            grads = tensors.grad(
                outputs,
                [input_args[i] for i in diff_positions],
                args[len(args) - num_outputs :],
                create_graph=True,
            )
        return tuple(g for g in grads if g is not None)

    return first_order_grads, tuple(inputs) + grad_outputs


def _random_like(tensors: Tensors, t: Any, rng: numpy.random.Generator, non_contiguous: bool) -> Any:
    """A grad_output like torch.testing.make_tensor(low=-1, high=1, requires_grad=True)."""
    shape = tuple(tensors.shape(t))
    if non_contiguous and math.prod(shape) > 1:
        wide = rng.uniform(-1.0, 1.0, shape[:-1] + (2 * shape[-1],))
        values = wide[..., ::2]
    else:
        values = rng.uniform(-1.0, 1.0, shape)
    like = t if t.dtype.is_floating_point else tensors.float64_leaf(t)
    return tensors.tensor(values, like, requires_grad=True)
