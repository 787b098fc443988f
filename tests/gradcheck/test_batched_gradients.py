"""gradcheck's check_batched_grad and check_batched_forward_grad, gradgradcheck's check_batched_grad, as
torch 2.13's: gradients of a batch of vectors through vmap against the same vectors one by one.

Each test runs on the engine and, where it is installed, on torch (the `lib` fixture), with torch's
texts (the torch runs check the engine's copies of them). A backward "wrong only when batched" tells
a batch from one vector as each library can: the engine's vmap hands it a BatchedTensor, torch's
prototype vmap a legacy batched tensor.
"""

from __future__ import annotations

import importlib
import re

import pytest

import engine
from engine.autograd.gradcheck.messages import FAILED_BATCHED_GRAD_MSG, FAILED_BATCHED_GRAD_MSG_FWD_AD
from engine.func.batched import BatchedTensor

NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"


@pytest.fixture(params=["engine", pytest.param("torch", marks=pytest.mark.torch_parity)])
def lib(request):
    return engine if request.param == "engine" else pytest.importorskip("torch")


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


def double(lib, *shape):
    return lib.rand(*shape, dtype=lib.float64, requires_grad=True)


def gradcheck_error(lib) -> type:
    return importlib.import_module(f"{lib.__name__}.autograd.gradcheck").GradcheckError


def is_batched(lib, t) -> bool:
    if lib is engine:
        return isinstance(t, BatchedTensor)
    return lib._C._functorch.is_legacy_batchedtensor(t)


def doubling(lib, backward=None, jvp=None):
    """x * 2 as a custom Function, with the backward (g -> gradient) and jvp (t -> tangent) given."""

    def forward(ctx, x):
        return x * 2

    methods = {
        "forward": staticmethod(forward),
        "backward": staticmethod(lambda ctx, g: (backward or (lambda g: g * 2))(g)),
        "jvp": staticmethod(lambda ctx, t: (jvp or (lambda t: t * 2))(t)),
    }
    return type("Doubling", (lib.autograd.Function,), methods).apply


def through_values(lib):
    """g * 2 computed on g's values read into Python: right for one vector, impossible for a batch."""
    return lambda g: lib.tensor([2.0 * v for v in g.tolist()], dtype=g.dtype)


def tripled_when_batched(lib):
    return lambda g: g * 3 if is_batched(lib, g) else g * 2


def test_correct_functions_pass_every_batched_check(lib):
    x, y = double(lib, 3), double(lib, 2, 3)

    def func(a, b, unused):
        return (a.sin() * b).sum(0), doubling(lib)(b).exp()

    inputs = (x, y, double(lib, 2))
    assert lib.autograd.gradcheck(func, inputs, check_batched_grad=True)
    assert lib.autograd.gradgradcheck(func, inputs, check_batched_grad=True)
    assert lib.autograd.gradcheck(func, inputs, check_forward_ad=True, check_batched_forward_grad=True)


def test_a_backward_that_cannot_run_on_a_batch_fails_with_the_vmap_error(lib):
    func = doubling(lib, backward=through_values(lib))
    message = f"While computing batched gradients, got: {NO_STORAGE}\n\n{FAILED_BATCHED_GRAD_MSG}"
    x = double(lib, 3)
    assert lib.autograd.gradcheck(func, (x,))
    with pytest.raises(gradcheck_error(lib), match=exactly(message)):
        lib.autograd.gradcheck(func, (x,), check_batched_grad=True)
    assert not lib.autograd.gradcheck(func, (x,), check_batched_grad=True, raise_exception=False)


def test_a_backward_wrong_only_on_a_batch_fails_naming_its_output_and_input(lib):
    func = doubling(lib, backward=tripled_when_batched(lib))
    x, y = double(lib, 3), double(lib, 3)
    head = f"For output 1 and input 1:\n\n{FAILED_BATCHED_GRAD_MSG}\n\nGot:\n"
    pattern = (
        re.escape(head)
        + r"tensor\(\[\[[^:]*\]\][^:]*"
        + re.escape("\n\nExpected:\n")
        + r"tensor\(\[\[[^:]*\]\][^:]*$"
    )
    with pytest.raises(gradcheck_error(lib), match=f"^{pattern}"):
        lib.autograd.gradcheck(lambda a, b: (a * 2, func(b)), (x, y), check_batched_grad=True)


def test_gradgradcheck_batches_the_gradients_of_the_first_order_gradient(lib):
    inner = doubling(lib, backward=through_values(lib))

    def func(x):
        return doubling(lib, backward=inner)(x)  # the gradient is inner's output: its backward runs batched

    x = double(lib, 3)
    assert lib.autograd.gradgradcheck(func, (x,))
    message = f"While computing batched gradients, got: {NO_STORAGE}\n\n{FAILED_BATCHED_GRAD_MSG}"
    with pytest.raises(gradcheck_error(lib), match=exactly(message)):
        lib.autograd.gradgradcheck(func, (x,), check_batched_grad=True)


def test_a_jvp_that_cannot_run_on_a_batch_fails_with_the_vmap_error(lib):
    func = doubling(lib, jvp=through_values(lib))
    x = double(lib, 3)
    assert lib.autograd.gradcheck(func, (x,), check_forward_ad=True)
    message = f"While computing batched gradients, got: {NO_STORAGE}\n\n{FAILED_BATCHED_GRAD_MSG_FWD_AD}"
    with pytest.raises(gradcheck_error(lib), match=exactly(message)):
        lib.autograd.gradcheck(func, (x,), check_forward_ad=True, check_batched_forward_grad=True)


def test_a_jvp_wrong_only_on_a_batch_names_the_output_twice(lib):
    """torch's loop over the outputs reuses the input's index: its message names the output as both."""
    func = doubling(lib, jvp=tripled_when_batched(lib))
    x, y = double(lib, 3), double(lib, 3)
    head = f"For output 1 and input 1:\n\n{FAILED_BATCHED_GRAD_MSG_FWD_AD}\n\nGot:\n"
    with pytest.raises(gradcheck_error(lib), match="^" + re.escape(head)):
        lib.autograd.gradcheck(
            lambda a, b: (b * 2, func(a)), (x, y), check_forward_ad=True, check_batched_forward_grad=True
        )


def test_batched_forward_gradients_need_forward_mode(lib):
    message = "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
    with pytest.raises(AssertionError, match=exactly(message)):
        lib.autograd.gradcheck(lambda a: a * 2, (double(lib, 3),), check_batched_forward_grad=True)


def test_gradients_placed_at_an_index_run_on_the_batch(lib):
    """An index's, a gather's, a sort's backward places g at indices, one example at a time."""
    x = double(lib, 2, 3, 4)
    index = lib.tensor([[[1, 1, 0]] * 3] * 2)
    for func in (
        lambda a: a[lib.tensor([0, 1, 1])],
        lambda a: a[lib.tensor([0, 1]), :, lib.tensor([2, 3])],
        lambda a: a.gather(2, index),
        lambda a: a.sort()[0],
    ):
        assert lib.autograd.gradcheck(func, (x,), check_batched_grad=True)
        assert lib.autograd.gradgradcheck(func, (x,), check_batched_grad=True)


def test_an_op_whose_backward_has_no_batching_rule_passes_as_in_torch(lib):
    """A row without a batching rule (here addbmm, in a right backward: 2 g as g @ 2I) runs per batch
    element under vmap, as torch's vmap falls back to a loop, so the batched check passes."""

    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            eye = 2 * lib.eye(3, dtype=g.dtype).reshape(1, 3, 3)
            return lib.addbmm(lib.zeros(2, 3, dtype=g.dtype), g.reshape(1, 2, 3), eye)

    x = double(lib, 2, 3)
    assert lib.autograd.gradcheck(Twice.apply, (x,), check_batched_grad=True)
