"""Autograd state across threads, as PyTorch 2.13 keeps it: grad mode, saved-tensor hooks and the
running backward and torch.func's transforms per thread; anomaly mode, the open forward-AD level and the default dtype for the
whole process. Threads run concurrently (barriers make them overlap at the point that matters)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

import engine
from engine.autograd import anomaly


def in_thread(fn: Callable):
    """`fn()` run on a new thread; its result (or its error, raised here)."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = fn()
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def pack_count(lib) -> Callable:
    """How many tensors the saved-tensor hooks registered on this thread pack for one product."""

    def count():
        calls = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: (calls.append(t), t)[1], lambda t: t):
            a = lib.ones(2, requires_grad=True)
            _ = a * a
        return len(calls)

    return count


def what_a_new_thread_sees(lib) -> dict:
    """Each state set on this thread, and what a thread started inside it reads (measured on torch)."""
    graph, fwad = lib.autograd.graph, lib.autograd.forward_ad
    seen = {}
    with lib.no_grad():
        seen["no_grad"] = in_thread(lib.is_grad_enabled)
    lib.set_grad_enabled(False)
    try:
        seen["set_grad_enabled(False)"] = in_thread(lib.is_grad_enabled)
    finally:
        lib.set_grad_enabled(True)
    with lib.autograd.set_detect_anomaly(True, check_nan=False):
        seen["set_detect_anomaly"] = in_thread(
            lambda: (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
        )
    packs: list = []
    with graph.saved_tensors_hooks(lambda t: (packs.append(t), t)[1], lambda t: t):
        in_thread(lambda: lib.ones(2, requires_grad=True) * 2)
        seen["saved_tensors_hooks"] = len(packs)

    def register():
        try:
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                return "allowed"
        except RuntimeError as exc:
            return str(exc)

    with graph.disable_saved_tensors_hooks("not here"):
        seen["disable_saved_tensors_hooks"] = in_thread(register)
    with fwad.dual_level():
        dual = fwad.make_dual(lib.ones(2), lib.full((2,), 3.0))
        seen["dual_level"] = in_thread(lambda: fwad.unpack_dual(dual * 2).tangent.tolist())
    previous = lib.get_default_dtype()
    lib.set_default_dtype(lib.float64)
    try:
        seen["set_default_dtype"] = str(in_thread(lib.get_default_dtype)).split(".")[-1]
    finally:
        lib.set_default_dtype(previous)
    return seen


@pytest.mark.torch_parity
def test_a_new_thread_sees_what_torchs_does():
    torch = pytest.importorskip("torch")
    expected = {
        "no_grad": True,
        "set_grad_enabled(False)": True,
        "set_detect_anomaly": (True, False),
        "saved_tensors_hooks": 0,
        "disable_saved_tensors_hooks": "allowed",
        "dual_level": [6.0, 6.0],
        "set_default_dtype": "float64",
    }
    assert what_a_new_thread_sees(torch) == expected
    assert what_a_new_thread_sees(engine) == expected


def test_two_threads_train_at_once_one_under_no_grad(lib):
    """One thread evaluates under no_grad while the other trains: the trainer's graph is recorded."""
    inside_no_grad, trained = threading.Barrier(2), threading.Barrier(2)
    w = lib.ones(3, requires_grad=True)

    def evaluate():
        with lib.no_grad():
            inside_no_grad.wait()
            y = (w * 2).sum()
            trained.wait()
        return y.requires_grad

    def train():
        inside_no_grad.wait()
        try:
            (w * w).sum().backward()
            return w.grad.tolist()
        finally:
            trained.wait()

    results: dict = {}
    threads = [
        threading.Thread(target=lambda f=f: results.__setitem__(f.__name__, f())) for f in (evaluate, train)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"evaluate": False, "train": [2.0, 2.0, 2.0]}


def made_during_backward(lib):
    """`x * 2` made on this thread while another thread runs the backward of `x * 3` (paused in a
    hook until it is made); returns x and the product."""
    in_backward, made = threading.Barrier(2), threading.Barrier(2)
    x = lib.ones(2, requires_grad=True)
    y = x * 3
    y.register_hook(lambda grad: (in_backward.wait(), made.wait()) and None)
    worker = threading.Thread(target=lambda: y.sum().backward())
    worker.start()
    in_backward.wait()
    z = x * 2
    made.wait()
    worker.join()
    return x, z


def test_a_backward_on_another_thread_leaves_this_threads_grad_mode(lib):
    """The executor turns grad mode off while it runs (no create_graph): on its own thread only."""
    x, z = made_during_backward(lib)
    assert z.requires_grad and lib.is_grad_enabled()
    assert x.grad.tolist() == [3.0, 3.0]


def test_saved_tensor_hooks_are_the_registering_threads(lib):
    registered, counted = threading.Barrier(2), threading.Barrier(2)
    count = pack_count(lib)

    def other():
        registered.wait()
        a = lib.ones(2, requires_grad=True)
        _ = a * a
        counted.wait()

    calls = []
    worker = threading.Thread(target=other)
    worker.start()
    with lib.autograd.graph.saved_tensors_hooks(lambda t: (calls.append(t), t)[1], lambda t: t):
        registered.wait()
        counted.wait()
    worker.join()
    assert calls == [] and count() == 2


def test_a_deep_reentrant_backward_keeps_the_callers_saved_tensor_hooks(lib):
    """A reentrant backward deep enough to go on on a worker thread: the worker packs with the
    caller's hooks, as torch's worker threads take on the caller's state."""
    from .test_executor_semantics import deep_reentrant

    seen = {}
    packs: list = []

    def at_the_bottom():
        with lib.enable_grad():
            a = lib.ones(2, requires_grad=True)
            _ = a * a
        seen["packed"] = len(packs)

    v = lib.tensor(3000.0, requires_grad=True)
    out = deep_reentrant(lib, at_the_bottom).apply(v).sum()
    with lib.autograd.graph.saved_tensors_hooks(lambda t: (packs.append(t), t)[1], lambda t: t):
        out.backward()
    assert seen == {"packed": 2} and v.grad.item() == 1.0


def test_a_node_made_on_another_thread_is_not_induced_by_this_threads_backward():
    """Anomaly mode's "induced by" names a node whose backward runs on the same thread only."""
    with anomaly.set_detect_anomaly(True):
        _, z = made_during_backward(engine)
    assert type(z.grad_fn._trace) is list


def test_the_default_device_is_per_thread_as_torchs(fake_cuda, torch):
    """A thread started while the default device is a GPU starts on the CPU, in torch and here."""
    torch.set_default_device("meta")  # a device torch has on any machine
    try:
        assert in_thread(lambda: torch.zeros(1).device.type) == "cpu"
        assert torch.zeros(1).device.type == "meta"
    finally:
        torch.set_default_device(None)
    engine.set_default_device("cuda")
    try:
        assert in_thread(lambda: (engine.get_default_device(), engine.zeros(1).device.type)) == (
            engine.device("cpu"),
            "cpu",
        )
        assert engine.zeros(1).device.type == "cuda"
    finally:
        engine.set_default_device(None)


def while_another_thread_transforms(lib, transform: Callable, fn: Callable):
    """`fn()` on this thread while another thread is inside `transform(g)`'s function g (a torch.func
    transform, which torch keeps per thread); fn's result, and what the transform gave."""
    inside, done = threading.Barrier(2), threading.Barrier(2)

    def g(x):
        inside.wait()
        done.wait()
        return (x * x).sum()

    outcome: dict = {}
    worker = threading.Thread(target=lambda: outcome.__setitem__("transformed", transform(g)(lib.ones(2, 3))))
    worker.start()
    inside.wait()
    try:
        seen = fn()
    finally:
        done.wait()
        worker.join()
    return seen, outcome["transformed"].tolist()


def test_a_vmap_on_another_thread_leaves_this_threads_draws_alone(lib):
    """vmap's randomness is its own thread's: randomness="error" does not refuse this thread's draw,
    and "different" does not give this thread's draws a batch."""
    draw = lambda: list(lib.rand(3).shape)  # noqa: E731
    for randomness in ("error", "different"):
        transform = lambda g, r=randomness: lib.func.vmap(g, randomness=r)  # noqa: E731
        assert while_another_thread_transforms(lib, transform, draw) == ([3], [3.0, 3.0])


def old_style_square(lib):
    """An old-style custom Function (no setup_context), which torch.func refuses inside its transforms."""

    class OldSquare(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    return OldSquare


def test_a_transform_on_another_thread_leaves_this_threads_custom_functions_alone(lib):
    """torch.func's rules for custom Functions hold in the transforming thread only: an old-style
    Function still runs on this one while another thread is inside grad or vmap."""
    square = old_style_square(lib)

    def run():
        x = lib.tensor([3.0], requires_grad=True)
        square.apply(x).sum().backward()
        return x.grad.tolist()

    assert while_another_thread_transforms(lib, lib.func.grad, run) == ([6.0], [[2.0] * 3] * 2)
    assert while_another_thread_transforms(lib, lib.func.vmap, run) == ([6.0], [3.0, 3.0])
