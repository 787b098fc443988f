"""engine.autograd anomaly mode: PyTorch 2.13's behaviour and words, plus where versions were bumped.

Expected texts were taken from torch 2.13 (`torch.autograd.detect_anomaly`), with `torch`
read as `engine`. Line numbers are found by markers (`# mark: NAME`) so the tests say which
line must be named, not a number that drifts.
"""

from __future__ import annotations

import os
import warnings

import numpy
import pytest

import engine
from engine.autograd import anomaly

HERE = os.path.abspath(__file__)


def line_of(marker: str) -> int:
    """The line of this file that carries `# mark: <marker>`."""
    with open(HERE) as handle:
        for number, text in enumerate(handle, 1):
            if text.rstrip().endswith(f"# mark: {marker}"):
                return number
    raise AssertionError(f"no marker {marker}")


@pytest.fixture(autouse=True)
def anomaly_off_after():
    yield
    anomaly.state[0], anomaly.state[1] = False, True
    anomaly.asked[0], anomaly.asked[1] = False, True
    anomaly.set_observer(None)


# ------------------------------------------------------------------------ mode switches


def test_detect_anomaly_warns_like_torch_and_restores_the_previous_mode():
    with pytest.warns(UserWarning) as caught:
        manager = engine.autograd.detect_anomaly(check_nan=False)
    assert str(caught[0].message) == (
        "Anomaly Detection has been enabled. This mode will increase the runtime and should only "
        "be enabled for debugging."
    )
    assert caught[0].filename == HERE
    with manager:
        assert engine.autograd.is_anomaly_enabled() and not anomaly.is_anomaly_check_nan_enabled()
    assert not engine.autograd.is_anomaly_enabled() and anomaly.is_anomaly_check_nan_enabled()


def test_detect_anomaly_as_a_decorator_and_set_detect_anomaly_as_call_or_context():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @engine.autograd.detect_anomaly()
        def inside():
            return engine.autograd.is_anomaly_enabled()

    assert inside() and not engine.autograd.is_anomaly_enabled()
    engine.autograd.set_detect_anomaly(True)
    assert engine.autograd.is_anomaly_enabled() and anomaly.is_anomaly_check_nan_enabled()
    with engine.autograd.set_detect_anomaly(False):
        assert not engine.autograd.is_anomaly_enabled()
    assert engine.autograd.is_anomaly_enabled()
    engine.autograd.set_detect_anomaly(False)
    assert not engine.autograd.is_anomaly_enabled()


# ----------------------------------------------------------------------- creation traces


def test_nodes_record_the_users_frames_only_and_only_in_anomaly_mode():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    assert (x * 2).grad_fn._trace is None
    with engine.autograd.set_detect_anomaly(True):
        y = x * 2  # mark: mul
        z = engine.nn.functional.relu(y) if hasattr(engine, "nn") else y.relu()
    trace = anomaly.trace_of(y.grad_fn)
    assert trace[-1].filename == HERE and trace[-1].lineno == line_of("mul")
    assert trace[-1].name == "test_nodes_record_the_users_frames_only_and_only_in_anomaly_mode"
    assert trace[-1].line == "y = x * 2  # mark: mul"
    engine_dir = os.path.dirname(os.path.abspath(engine.__file__))
    for frames in (trace, anomaly.trace_of(z.grad_fn)):
        assert not [f for f in frames if f.filename.startswith(engine_dir)]
    # Stored raw: (code, lineno) pairs, innermost first; formatting waits for an error.
    code, lineno = y.grad_fn._trace[0]
    assert code.co_filename == HERE and lineno == line_of("mul")


def test_a_failing_backward_warns_with_the_forward_trace_as_torch_does():
    class Broken(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    x = engine.tensor([1.0, 2.0], requires_grad=True)
    with engine.autograd.set_detect_anomaly(True):
        y = Broken.apply(x)  # mark: forward
        with pytest.warns(UserWarning) as caught, pytest.raises(ValueError, match="broken backward") as info:
            y.sum().backward()  # mark: backward
    warning = caught[0]
    assert str(warning.message) == (
        "Error detected in BrokenBackward. Traceback of forward call that caused the error:\n"
        f'  File "{HERE}", line {line_of("forward")}, in test_a_failing_backward_warns_with_the_forward_trace_as_torch_does\n'
        "    y = Broken.apply(x)  # mark: forward\n"
    )  # pytest's own frames are library frames: only the user's are kept
    assert (warning.filename, warning.lineno) == (HERE, line_of("backward"))  # the user's backward line
    assert info.value.anomaly_node is y.grad_fn


def test_nan_in_backward_raises_torchs_error_and_check_nan_false_lets_it_through():
    x = engine.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with engine.autograd.detect_anomaly():
            y = x.sqrt() * 0.0  # mark: sqrt
            with pytest.raises(RuntimeError) as info:
                y.sum().backward()
    assert str(info.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert info.value.anomaly_node.name() == "SqrtBackward0"
    trace_warnings = [str(w.message) for w in caught if "Error detected in" in str(w.message)]
    assert len(trace_warnings) == 1 and trace_warnings[0].startswith("Error detected in SqrtBackward0.")
    assert f"line {line_of('sqrt')}, in test_nan" in trace_warnings[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with engine.autograd.detect_anomaly(check_nan=False):
            (x.sqrt() * 0.0).sum().backward()
    assert numpy.isnan(x.grad.numpy()[0])


def test_inf_in_backward_is_not_an_error_for_torch_either():
    x = engine.tensor([0.0, 1.0], requires_grad=True)
    with engine.autograd.set_detect_anomaly(True):
        x.sqrt().sum().backward()
    assert numpy.isinf(x.grad.numpy()[0])


def test_has_nan_one_blas_call_is_exact():
    assert anomaly.has_nan(numpy.array([1.0, numpy.nan]))
    assert not anomaly.has_nan(numpy.array([numpy.inf, -numpy.inf]))  # squares never cancel
    assert not anomaly.has_nan(numpy.array([1e30, 1e30], dtype=numpy.float32))  # overflow is inf, not nan
    assert anomaly.has_nan(numpy.ones((3, 4))[:, ::2] * numpy.nan)
    assert not anomaly.has_nan(numpy.zeros((0,)))
    assert not anomaly.has_nan(numpy.array(3.0))


# ------------------------------------------------------------------- versions and bumps

TORCH_ANOMALY_HINT = (
    "Hint: the backtrace further above shows the operation that failed to compute its gradient. "
    "The variable in question was changed in there or anywhere later. Good luck!"
)


def test_modified_saved_tensor_names_the_saving_line_and_the_modifying_line():
    a = engine.tensor([1.0, 3.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with engine.autograd.detect_anomaly():
            b = a + 2
            loss = (b * b).mean()  # mark: saved
            b[0] = 1000.0  # mark: modified
            with pytest.raises(RuntimeError) as info:
                loss.backward()
    text = str(info.value)
    torch_part, ours = text.split("\n", 1)
    assert torch_part == (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [engine.FloatTensor [2]], which is output 0 of engine::autograd::CopySlices, is at "
        f"version 1; expected version 0 instead. {TORCH_ANOMALY_HINT}"
    )
    assert ours == (
        "The tensor [engine.FloatTensor [2]] was saved at version 0 by MulBackward0, created at\n"
        f'  File "{HERE}", line {line_of("saved")}, in test_modified_saved_tensor_names_the_saving_line_and_the_modifying_line\n'
        "    loss = (b * b).mean()  # mark: saved\n"
        "and modified in place (version 0 -> 1) at\n"
        f'  File "{HERE}", line {line_of("modified")}, in test_modified_saved_tensor_names_the_saving_line_and_the_modifying_line\n'
        "    b[0] = 1000.0  # mark: modified"
    )
    assert info.value.saved_tensor is b and info.value.expected_version == 0
    assert info.value.anomaly_node.name() == "MulBackward0"


def test_every_later_bump_is_listed_and_an_unrecorded_one_says_so():
    x = engine.tensor([0.5, 1.5], requires_grad=True)
    y = x * 1
    z = y.exp()
    s = z.sum()
    z.add_(1)  # anomaly mode still off: not recorded
    with engine.autograd.set_detect_anomaly(True, check_nan=False):
        z.mul_(2)  # mark: second
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError) as info:
                s.backward()
    text = str(info.value)
    assert "is at version 2; expected version 0 instead." in text
    assert "was saved at version 0 by ExpBackward0, created at\n  (not recorded" in text  # made before
    assert "and modified in place (version 0 -> 1) at\n  (not recorded" in text
    assert f'then (version 1 -> 2) at\n  File "{HERE}", line {line_of("second")}' in text


def test_the_message_is_torchs_alone_when_anomaly_mode_is_off():
    x = engine.tensor([0.5, 1.5], requires_grad=True)
    z = (x * 1).exp()
    s = z.sum()
    z.add_(1)
    with pytest.raises(RuntimeError) as info:
        s.backward()
    assert "\n" not in str(info.value) and str(info.value).endswith("check_nan=False).")


def test_bumps_are_recorded_on_the_shared_version_counter_with_their_lines():
    a = engine.zeros(4)
    a.add_(1)  # anomaly off: nothing recorded
    assert anomaly.bumps_of(a) == []
    with engine.autograd.set_detect_anomaly(True):
        view = a[1:3]
        view.add_(1)  # mark: view
        a.mul_(2)  # mark: base
    bumps = anomaly.bumps_of(a)
    assert [(v, f.lineno) for v, f in bumps] == [(2, line_of("view")), (3, line_of("base"))]
    assert anomaly.bumps_of(view) == bumps  # views share the counter, and so the records
    assert bumps[0][1].filename == HERE and bumps[0][1].line == "view.add_(1)  # mark: view"
    assert a._version == 3


def test_bump_records_are_bounded():
    a = engine.zeros(2)
    with engine.autograd.set_detect_anomaly(True):
        for _ in range(anomaly.MAX_BUMPS + 10):
            a.add_(1)
    bumps = anomaly.bumps_of(a)
    assert len(bumps) == anomaly.MAX_BUMPS and bumps[-1][0] == anomaly.MAX_BUMPS + 10


# ------------------------------------------------------------------------- the observer


class Recorder(anomaly.Observer):
    def __init__(self):
        self.calls = []

    def forward(self, node, inputs, out, trace):
        self.calls.append(("forward", node.name(), trace[0][1]))

    def backward_begin(self, roots, retain_graph, inputs, capture):
        self.calls.append(("begin", retain_graph, capture))

    def node_done(self, node, grads, outputs):
        self.calls.append(("done", node.name()))

    def released(self, node):
        self.calls.append(("released", node.name()))

    def accumulating(self, variable, g):
        self.calls.append(("accumulating", variable.shape))

    def backward_end(self, inputs, captured):
        self.calls.append(("end", captured is not None))

    def grad_read(self, tensor):
        self.calls.append(("grad_read", tensor.is_leaf))


def test_the_observer_sees_each_hook_point_in_anomaly_mode_only():
    recorder = Recorder()
    anomaly.set_observer(recorder)
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    _ = x.grad
    assert recorder.calls == []  # anomaly mode off: the observer is never called
    with engine.autograd.set_detect_anomaly(True):
        y = x * 3  # mark: observed
        y.sum().backward()
        _ = x.grad
        engine.autograd.grad((x * 2).sum(), x)
    assert recorder.calls[:11] == [
        ("forward", "MulBackward0", line_of("observed")),
        ("forward", "SumBackward0", line_of("observed") + 1),
        ("begin", False, False),
        ("done", "SumBackward0"),
        ("released", "SumBackward0"),
        ("done", "MulBackward0"),
        ("released", "MulBackward0"),
        ("accumulating", (2,)),
        ("done", "engine::autograd::AccumulateGrad"),
        ("released", "engine::autograd::AccumulateGrad"),
        ("end", False),
    ]
    assert ("grad_read", True) in recorder.calls
    assert recorder.calls[-1] == ("end", True)  # autograd.grad: the captured gradients


def test_user_files_and_internal_files():
    assert anomaly.is_internal_file(engine.__file__)
    assert anomaly.is_internal_file(os.__file__)  # the standard library
    assert anomaly.is_internal_file(pytest.__file__)  # site-packages
    assert not anomaly.is_internal_file(HERE)
    assert not anomaly.is_internal_file("<stdin>") and anomaly.is_internal_file("<frozen runpy>")


def test_a_registered_folder_is_internal_from_then_on(tmp_path, monkeypatch):
    monkeypatch.setattr(anomaly, "_internal_roots", list(anomaly._roots()))
    monkeypatch.setattr(anomaly, "_internal_files", {})
    tool = tmp_path / "tool"
    tool.mkdir()
    inside, beside = str(tool / "cli.py"), str(tmp_path / "script.py")
    assert not anomaly.is_internal_file(inside) and not anomaly.is_internal_file(beside)  # now cached
    anomaly.register_internal_root(str(tool))
    assert anomaly.is_internal_file(inside) and not anomaly.is_internal_file(beside)
    roots = list(anomaly._internal_roots)
    anomaly.register_internal_root(str(tool) + os.sep)  # again: nothing added
    assert anomaly._internal_roots == roots


# ------------------------------------------------------------------- what an error is, by attribute


def _raised(call) -> BaseException:
    with pytest.raises(RuntimeError) as caught:
        call()
    return caught.value


def _autograd_errors() -> dict[str, list[BaseException]]:
    """Each error the engine marks with `autograd_kind`, raised the ways a script would."""
    import importlib

    backward_module = importlib.import_module("engine.autograd.backward")  # the module, not the function

    class Square(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class DirtiesItsInput(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    def twice(loss):
        loss.backward()
        return _raised(loss.backward)

    def leaf():
        return engine.ones(3, requires_grad=True)

    def no_grad_view(change_base: bool):
        base = leaf() * 2
        with engine.no_grad():
            view = base[:2]
        if change_base:
            base.mul_(3)
            return _raised(lambda: (view * view).sum().backward())  # raised at `view * view`, as in torch
        return _raised(lambda: view.mul_(3))

    integer = engine.tensor(3)
    integer._rg = True  # no public way to an integer tensor that requires grad: the engine guards it anyway
    return {
        "freed": [twice((leaf() * leaf()).sum()), twice(Square.apply(leaf()).sum())],
        "leaf-inplace": [_raised(lambda: leaf().mul_(2)), _raised(lambda: DirtiesItsInput.apply(leaf()))],
        "view-of-leaf-inplace": [_raised(lambda: leaf()[:2].mul_(2))],
        "no-grad-view-inplace": [no_grad_view(change_base=False)],
        "no-grad-view-changed": [no_grad_view(change_base=True)],
        "implicit-grad": [
            _raised((leaf() * 2).backward),
            _raised(lambda: backward_module._make_grads((integer,), (None,))),
        ],
    }


def test_the_engine_marks_each_autograd_error_with_its_kind():
    for kind, errors in _autograd_errors().items():
        for err in errors:
            assert getattr(err, "autograd_kind", None) == kind, (kind, str(err))
