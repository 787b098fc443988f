"""RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam and engine.optim.lr_scheduler against torch.

Each optimizer runs the same steps on the same problem in the engine and in torch (where
installed): parameter trajectories, state, param groups and errors must agree. Schedulers are
compared value for value (they are Python arithmetic: the rates must be equal, not close),
with their warnings and state dicts. Without torch, the engine-only checks still run.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

P0 = np.array([[0.5, -1.2, 2.0], [0.1, 0.7, -0.3]])
Q0 = np.array([0.3, -0.8, 1.1])
C = np.array([[1.0, 2.0, 0.5], [3.0, 0.2, 1.5]])
D = np.array([[0.3, -0.1, 0.2], [-0.4, 0.5, 0.0]])

# ------------------------------------------------------------------------------ optimizers

OPTIMIZER_CASES = {
    "RMSprop": [
        {},
        dict(lr=0.05, alpha=0.9, eps=1e-6),
        dict(lr=0.02, weight_decay=0.1),
        dict(lr=0.01, momentum=0.9),
        dict(lr=0.01, centered=True),
        dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.05),
        dict(lr=0.01, maximize=True, alpha=0.5),
        dict(lr=0.03, foreach=True),
    ],
    "Adagrad": [
        {},
        dict(lr=0.1, lr_decay=0.05),
        dict(lr=0.1, initial_accumulator_value=0.3, eps=1e-6),
        dict(lr=0.05, weight_decay=0.2),
        dict(lr=0.05, maximize=True),
        dict(lr=0.1, fused=True),
        dict(lr=0.1, foreach=True, lr_decay=0.1),
    ],
    "Adadelta": [
        {},
        dict(lr=0.5, rho=0.5, eps=1e-4),
        dict(lr=1.0, weight_decay=0.1),
        dict(rho=0.0),
        dict(rho=1.0),
        dict(maximize=True),
        dict(foreach=True),
    ],
    "Adamax": [
        {},
        dict(lr=0.05, betas=(0.5, 0.9), eps=1e-4),
        dict(lr=0.05, weight_decay=0.1),
        dict(lr=0.01, maximize=True),
        dict(lr=0.02, foreach=True),
    ],
    "NAdam": [
        {},
        dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6),
        dict(lr=0.05, momentum_decay=0.1),
        dict(lr=0.05, weight_decay=0.1),
        dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True),
        dict(lr=0.01, maximize=True),
        dict(lr=0.02, foreach=True),
    ],
    "RAdam": [
        {},
        dict(lr=0.05, betas=(0.8, 0.9)),
        dict(lr=0.05, betas=(0.9, 0.5)),
        dict(lr=0.05, weight_decay=0.1),
        dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, eps=1e-4),
        dict(lr=0.01, maximize=True),
        dict(lr=0.02, foreach=True),
    ],
}
CASES = [(name, kwargs) for name, cases in OPTIMIZER_CASES.items() for kwargs in cases]
NAMES = list(OPTIMIZER_CASES)


def _case_id(case) -> str:
    name, kwargs = case
    return name + "".join(f"-{k}={v}" for k, v in kwargs.items())


def trajectory(lib, name, kwargs, *, steps=9, dtype="float64", groups=False):
    """Minimise a quadratic plus a non-convex term for `steps` steps; the parameters after each step.

    A third parameter never gets a gradient (skipped, as torch skips it)."""
    dt = getattr(lib, dtype)
    p = lib.nn.Parameter(lib.tensor(P0, dtype=dt))
    q = lib.nn.Parameter(lib.tensor(Q0, dtype=dt))
    unused = lib.nn.Parameter(lib.ones(2, dtype=dt))
    c, d = lib.tensor(C, dtype=dt), lib.tensor(D, dtype=dt)
    if groups:
        params = [{"params": [p, unused]}, {"params": [q], "lr": 0.003, "weight_decay": 0.01}]
    else:
        params = [p, q, unused]
    opt = getattr(lib.optim, name)(params, **kwargs)
    path = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (c * p * p / 2 + d * p).sum() + (q.sin() * q).sum()
        loss.backward()
        opt.step()
        path.append([t.detach().numpy().copy() for t in (p, q, unused)])
    return path, opt


def _tolerance(dtype):
    return dict(rtol=1e-12, atol=1e-14) if dtype == "float64" else dict(rtol=2e-6, atol=1e-7)


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=_case_id)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_trajectory_matches_torch(case, dtype):
    name, kwargs = case
    ours, opt_e = trajectory(engine, name, kwargs, dtype=dtype)
    theirs, opt_t = trajectory(torch, name, kwargs, dtype=dtype)
    for step, (e, t) in enumerate(zip(ours, theirs)):
        for a, b in zip(e, t):
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, **_tolerance(dtype), err_msg=f"step {step + 1}")
    _same_state(opt_e, opt_t, dtype)


def _same_state(opt_e, opt_t, dtype="float64") -> None:
    """The same state (names, dtypes, values) and the same param groups, in torch's state_dict form."""
    se, st = opt_e.state_dict(), opt_t.state_dict()
    assert se["param_groups"] == st["param_groups"]
    assert se["state"].keys() == st["state"].keys()
    for index in st["state"]:
        ours, theirs = se["state"][index], st["state"][index]
        assert list(ours) == list(theirs)
        for key, value in theirs.items():
            assert str(ours[key].dtype).split(".")[1] == str(value.dtype).split(".")[1], key
            assert tuple(ours[key].shape) == tuple(value.shape), key
            np.testing.assert_allclose(ours[key].numpy(), value.numpy(), **_tolerance(dtype), err_msg=key)


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_param_groups_with_their_own_hyperparameters(name):
    ours, opt_e = trajectory(engine, name, {"lr": 0.02}, groups=True)
    theirs, opt_t = trajectory(torch, name, {"lr": 0.02}, groups=True)
    np.testing.assert_allclose(
        np.concatenate([a.ravel() for e in ours for a in e]),
        np.concatenate([a.ravel() for t in theirs for a in t]),
        rtol=1e-12,
        atol=1e-14,
    )
    _same_state(opt_e, opt_t)


@needs_torch
@pytest.mark.parametrize("name", ["RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam", "Adagrad"])
def test_tensor_learning_rate(name):
    def run(lib):
        return trajectory(lib, name, {"lr": lib.tensor(0.01)}, steps=4)[0][-1]

    for a, b in zip(run(engine), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", NAMES)
def test_defaults_match_torch(name):
    p = engine.nn.Parameter(engine.ones(2))
    opt = getattr(engine.optim, name)([p])
    assert opt.param_groups[0]["params"] == [p]
    if torch is not None:
        theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))])
        assert opt.defaults == theirs.defaults
        assert list(opt.defaults) == list(theirs.defaults)
        assert repr(opt) == repr(theirs)


@pytest.mark.parametrize("name", NAMES)
def test_each_optimizer_lowers_a_loss(name):
    """Without torch too: a few hundred steps shrink a convex quadratic."""
    p = engine.nn.Parameter(engine.tensor(P0))
    c, d = engine.tensor(C), engine.tensor(D)
    opt = getattr(engine.optim, name)([p], lr=0.05 if name != "Adadelta" else 1.0)

    def loss():
        return (c * p * p / 2 + d * p).sum()

    start = loss().item()
    for _ in range(300):
        opt.zero_grad()
        value = loss()
        value.backward()
        opt.step()
    assert loss().item() < start - 1.0
    assert p._version > 0  # updates bump the version, as torch's in-place updates do


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_continues_identically(name):
    kwargs = {"lr": 0.02}
    full, _ = trajectory(engine, name, kwargs, steps=6)
    first, opt = trajectory(engine, name, kwargs, steps=3)
    saved = opt.state_dict()
    p = engine.nn.Parameter(engine.tensor(first[-1][0]))
    q = engine.nn.Parameter(engine.tensor(first[-1][1]))
    unused = engine.nn.Parameter(engine.ones(2, dtype=engine.float64))
    resumed = getattr(engine.optim, name)([p, q, unused], **kwargs)
    resumed.load_state_dict(saved)
    c, d = engine.tensor(C), engine.tensor(D)
    for _ in range(3):
        resumed.zero_grad()
        ((c * p * p / 2 + d * p).sum() + (q.sin() * q).sum()).backward()
        resumed.step()
    # Exact, except NAdam: loading casts its float32 mu_product to the parameter's dtype, as torch does
    tolerance = dict(rtol=1e-9, atol=0) if name == "NAdam" else dict(rtol=0, atol=0)
    np.testing.assert_allclose(p.detach().numpy(), full[-1][0], **tolerance)
    np.testing.assert_allclose(q.detach().numpy(), full[-1][1], **tolerance)
    if name == "NAdam":
        assert resumed.state[p]["mu_product"].dtype is engine.float64


@pytest.mark.parametrize("name", NAMES)
def test_step_counter_dtype_follows_the_default_dtype(name):
    engine.set_default_dtype(engine.float64)
    try:
        _, opt = trajectory(engine, name, {}, steps=1, dtype="float32")
    finally:
        engine.set_default_dtype(engine.float32)
    state = next(iter(opt.state.values()))
    assert state["step"].dtype is engine.float64 and state["step"].item() == 1.0
    if name == "NAdam":
        assert state["mu_product"].dtype is engine.float64


def test_fused_adagrad_counts_steps_in_float32():
    def run(lib):
        lib.set_default_dtype(lib.float64)
        try:
            opt = lib.optim.Adagrad([lib.nn.Parameter(lib.ones(2))], fused=True)
            plain = lib.optim.Adagrad([lib.nn.Parameter(lib.ones(2))])
        finally:
            lib.set_default_dtype(lib.float32)
        return [str(next(iter(o.state.values()))["step"].dtype).split(".")[1] for o in (opt, plain)]

    ours = run(engine)
    assert ours == ["float32", "float64"]
    if torch is not None:
        assert ours == run(torch)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "Adagrad"])
def test_capturable_needs_a_gpu(name):
    """torch refuses capturable=True for CPU parameters when it steps; so does the engine."""
    message = "If capturable=True, "

    def run(lib):
        p = lib.nn.Parameter(lib.ones(2, device="cpu"))
        opt = getattr(lib.optim, name)([p], capturable=True)
        (p * p).sum().backward()
        with pytest.raises(AssertionError) as info:
            opt.step()
        return str(info.value)

    ours = run(engine)
    assert ours.startswith(message)
    if torch is not None:
        assert ours == run(torch)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "Adagrad"])
def test_capturable_on_the_gpu_keeps_the_step_there(fake_cuda, name):
    p = engine.nn.Parameter(engine.ones(2, device="cuda"))
    opt = getattr(engine.optim, name)([p], capturable=True)
    (p * p).sum().backward()
    opt.step()
    assert opt.state[p]["step"].device == engine.device("cuda:0") and opt.state[p]["step"].item() == 1.0
    reference = getattr(engine.optim, name)([engine.nn.Parameter(engine.ones(2))])
    q = reference.param_groups[0]["params"][0]
    (q * q).sum().backward()
    reference.step()
    np.testing.assert_array_equal(p.detach().cpu().numpy(), q.detach().numpy())


@pytest.mark.parametrize("name", NAMES + ["SGD", "Adam", "AdamW"])
def test_differentiable_steps_are_refused(name):
    """Differentiating through a step needs the step recorded, which engine.optim does not do: it says so."""
    p = engine.nn.Parameter(engine.ones(2))
    opt = getattr(engine.optim, name)([p], differentiable=True)
    assert opt.defaults["differentiable"] is True
    (p * p).sum().backward()
    with pytest.raises(NotImplementedError, match="differentiable=True is not supported"):
        opt.step()
    assert p.tolist() == [1.0, 1.0]


ERROR_CASES = [
    ("RMSprop", dict(lr=-0.1)),
    ("RMSprop", dict(eps=-1.0)),
    ("RMSprop", dict(momentum=-0.5)),
    ("RMSprop", dict(weight_decay=-1e-3)),
    ("RMSprop", dict(alpha=-0.9)),
    ("Adagrad", dict(lr=-1.0)),
    ("Adagrad", dict(lr_decay=-0.1)),
    ("Adagrad", dict(weight_decay=-1.0)),
    ("Adagrad", dict(initial_accumulator_value=-0.5)),
    ("Adagrad", dict(eps=-1e-10)),
    ("Adadelta", dict(lr=-1.0)),
    ("Adadelta", dict(rho=1.5)),
    ("Adadelta", dict(rho=-0.1)),
    ("Adadelta", dict(eps=-1e-6)),
    ("Adadelta", dict(weight_decay=-1.0)),
    ("Adamax", dict(lr=-2e-3)),
    ("Adamax", dict(eps=-1.0)),
    ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))),
    ("Adamax", dict(weight_decay=-0.1)),
    ("NAdam", dict(betas=(0.9, 1.0))),
    ("NAdam", dict(momentum_decay=-4e-3)),
    ("NAdam", dict(lr=-1.0, eps=-1.0)),
    ("RAdam", dict(betas=(-0.5, 0.9))),
    ("RAdam", dict(weight_decay=-2.0)),
    ("RAdam", dict(eps=-2.0, weight_decay=-2.0)),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=_case_id)
def test_invalid_hyperparameters(case):
    name, kwargs = case

    def make(lib):
        with pytest.raises(ValueError) as info:
            getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2))], **kwargs)
        return str(info.value)

    ours = make(engine)
    assert ours.startswith("Invalid ")
    if torch is not None:
        assert ours == make(torch)


@pytest.mark.parametrize(
    "kwargs", [dict(fused=True, differentiable=True), dict(fused=True, foreach=True)], ids=str
)
def test_adagrad_fused_conflicts(kwargs):
    def make(lib):
        with pytest.raises(RuntimeError) as info:
            lib.optim.Adagrad([lib.nn.Parameter(lib.ones(2))], **kwargs)
        return str(info.value)

    ours = make(engine)
    assert ours.startswith("`fused`")
    if torch is not None:
        assert ours == make(torch)


@pytest.mark.parametrize("name", NAMES)
def test_tensor_lr_must_have_one_element(name):
    def make(lib):
        with pytest.raises(ValueError) as info:
            getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2))], lr=lib.tensor([0.1, 0.2]))
        return str(info.value)

    assert make(engine) == "Tensor lr must be 1-element"
    if torch is not None:
        assert make(torch) == "Tensor lr must be 1-element"


def test_adagrad_fills_its_sum_from_the_constructor_value():
    """As torch: a param group's own initial_accumulator_value is ignored for its state."""

    def run(lib):
        p = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        q = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        opt = lib.optim.Adagrad(
            [{"params": [p]}, {"params": [q], "initial_accumulator_value": 5.0}],
            initial_accumulator_value=0.5,
        )
        (p * p + q * q).sum().backward()
        opt.step()
        return opt.state[q]["sum"].tolist(), q.tolist()

    ours = run(engine)
    assert ours[0] == [4.5, 4.5]
    if torch is not None:
        assert ours == run(torch)


# ---------------------------------------------------------------------------- lr_scheduler


def _optimizer(lib, kind="SGD", lrs=(0.1,)):
    groups = [{"params": [lib.nn.Parameter(lib.ones(2))], "lr": lr} for lr in lrs]
    if kind == "SGD":
        return lib.optim.SGD(groups, lr=lrs[0], momentum=0.9)
    return getattr(lib.optim, kind)(groups, lr=lrs[0])


def _schedule(lib, make, *, epochs=14, kind="SGD", lrs=(0.1, 0.03), metrics=None):
    """Rates (and momentum / betas) after construction and after each epoch's scheduler step."""
    opt = _optimizer(lib, kind, lrs)
    scheduler = make(lib.optim.lr_scheduler, opt)

    def snapshot():
        group_keys = [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]
        return scheduler.get_last_lr(), group_keys

    out = [snapshot()]
    for epoch in range(epochs):
        opt.step()
        if metrics is None:
            scheduler.step()
        else:
            scheduler.step(metrics[epoch])
        out.append(snapshot())
    return out, scheduler


SCHEDULES = {
    "StepLR": lambda S, o: S.StepLR(o, step_size=3),
    "StepLR gamma": lambda S, o: S.StepLR(o, step_size=2, gamma=0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=5),
    "CosineAnnealingLR eta_min": lambda S, o: S.CosineAnnealingLR(o, T_max=4, eta_min=0.01),
    "LambdaLR": lambda S, o: S.LambdaLR(o, lr_lambda=lambda e: 0.95**e),
    "LambdaLR per group": lambda S, o: S.LambdaLR(o, lr_lambda=[lambda e: 1 / (e + 1), lambda e: 0.9**e]),
    "LinearLR": lambda S, o: S.LinearLR(o),
    "LinearLR factors": lambda S, o: S.LinearLR(o, start_factor=0.5, end_factor=0.1, total_iters=6),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=14),
    "OneCycleLR per group": lambda S, o: S.OneCycleLR(
        o, max_lr=[1.0, 0.5], epochs=2, steps_per_epoch=7, pct_start=0.25, base_momentum=[0.8, 0.7]
    ),
    "OneCycleLR linear": lambda S, o: S.OneCycleLR(
        o, max_lr=0.3, total_steps=15, anneal_strategy="linear", div_factor=10.0, final_div_factor=100.0
    ),
    "OneCycleLR three phase": lambda S, o: S.OneCycleLR(o, max_lr=0.8, total_steps=16, three_phase=True),
    "OneCycleLR no momentum": lambda S, o: S.OneCycleLR(o, max_lr=0.8, total_steps=14, cycle_momentum=False),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_matches_torch(name):
    ours, scheduler = _schedule(engine, SCHEDULES[name])
    assert len(ours) == 15 and all(len(lrs) == 2 for lrs, _ in ours)
    if torch is not None:
        theirs, reference = _schedule(torch, SCHEDULES[name])
        assert ours == theirs  # exactly: the same Python arithmetic in the same order
        assert _comparable(scheduler.state_dict()) == _comparable(reference.state_dict())


def _comparable(state: dict) -> dict:
    """A state dict with its callables replaced by their kind (functions are not comparable across libs)."""
    return {k: (type(v).__name__ if callable(v) else v) for k, v in state.items()}


def test_onecycle_cycles_betas_of_adam():
    make = lambda S, o: S.OneCycleLR(o, max_lr=0.5, total_steps=14, base_momentum=0.8)  # noqa: E731
    ours, _ = _schedule(engine, make, kind="Adam")
    assert ours[0][1][0][2] == (0.95, 0.999)
    if torch is not None:
        assert ours == _schedule(torch, make, kind="Adam")[0]


def test_chained_schedulers_compose():
    def run(lib):
        opt = _optimizer(lib)
        a = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        b = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        rates = []
        for _ in range(7):
            opt.step()
            a.step()
            b.step()
            rates.append((a.get_last_lr(), b.get_last_lr()))
        return rates

    ours = run(engine)
    assert ours[-1][1][0] == pytest.approx(0.1 * 0.9**7 * 0.5**3)
    if torch is not None:
        assert ours == run(torch)


PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.96, 0.97, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
PLATEAUS = {
    "default patience": lambda S, o: S.ReduceLROnPlateau(o),
    "patience 1": lambda S, o: S.ReduceLROnPlateau(o, patience=1, factor=0.5),
    "cooldown": lambda S, o: S.ReduceLROnPlateau(o, patience=0, cooldown=2),
    "max mode": lambda S, o: S.ReduceLROnPlateau(o, mode="max", patience=1),
    "abs threshold": lambda S, o: S.ReduceLROnPlateau(o, patience=1, threshold=0.06, threshold_mode="abs"),
    "max abs": lambda S, o: S.ReduceLROnPlateau(
        o, mode="max", patience=0, threshold=0.01, threshold_mode="abs"
    ),
    "min_lr": lambda S, o: S.ReduceLROnPlateau(o, patience=0, factor=0.2, min_lr=0.01),
    "min_lr per group": lambda S, o: S.ReduceLROnPlateau(o, patience=0, factor=0.2, min_lr=[0.02, 0.001]),
    "eps": lambda S, o: S.ReduceLROnPlateau(o, patience=0, factor=0.9, eps=0.005),
}


@pytest.mark.parametrize("name", sorted(PLATEAUS))
def test_reduce_on_plateau_matches_torch(name):
    ours, scheduler = _schedule(engine, PLATEAUS[name], metrics=PLATEAU_METRICS)
    if name == "patience 1":
        assert ours[-1][0][0] < 0.1
    if torch is not None:
        theirs, reference = _schedule(torch, PLATEAUS[name], metrics=PLATEAU_METRICS)
        assert ours == theirs
        assert scheduler.state_dict() == reference.state_dict()


def test_reduce_on_plateau_takes_a_tensor_metric():
    opt = _optimizer(engine)
    scheduler = engine.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    scheduler.step(engine.tensor(1.0))
    scheduler.step(engine.tensor(2.0))
    assert scheduler.get_last_lr() == [pytest.approx(0.01)]


def test_reduce_on_plateau_state_dict_round_trip():
    def run(lib):
        opt = _optimizer(lib)
        first = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, mode="max")
        for metric in (1.0, 0.5, 0.5):
            first.step(metric)
        second = lib.optim.lr_scheduler.ReduceLROnPlateau(opt)
        second.load_state_dict(first.state_dict())
        second.step(0.4)
        second.step(0.3)
        return second.get_last_lr(), second.num_bad_epochs, second.best, second.mode

    ours = run(engine)
    assert ours[3] == "max"
    if torch is not None:
        assert ours == run(torch)


@pytest.mark.parametrize("name", ["StepLR", "LambdaLR", "CosineAnnealingLR", "OneCycleLR"])
def test_scheduler_state_dict_round_trip_continues_identically(name):
    make = SCHEDULES[name]
    full, _ = _schedule(engine, make, epochs=10)
    opt = _optimizer(engine, lrs=(0.1, 0.03))
    scheduler = make(engine.optim.lr_scheduler, opt)
    for _ in range(4):
        opt.step()
        scheduler.step()
    saved = scheduler.state_dict()
    assert "optimizer" not in saved
    other = make(engine.optim.lr_scheduler, opt)
    other.load_state_dict(saved)
    for _ in range(6):
        opt.step()
        other.step()
    assert other.get_last_lr() == full[-1][0]


class Halving:
    """A callable object: its attributes are saved in LambdaLR's state dict (functions are not)."""

    def __init__(self) -> None:
        self.factor = 0.5

    def __call__(self, epoch: int) -> float:
        return self.factor**epoch


def test_lambda_state_dict_saves_callable_objects_only():
    def run(lib):
        opt = _optimizer(lib, lrs=(0.1, 0.2))
        scheduler = lib.optim.lr_scheduler.LambdaLR(opt, [Halving(), lambda e: 1.0])
        state = scheduler.state_dict()
        fresh = Halving()
        fresh.factor = 0.1
        other = lib.optim.lr_scheduler.LambdaLR(opt, [fresh, lambda e: 2.0])
        other.load_state_dict(state)
        return state["lr_lambdas"], fresh.factor, "lr_lambdas" in state

    ours = run(engine)
    assert ours == ([{"factor": 0.5}, None], 0.5, True)
    if torch is not None:
        assert ours == run(torch)


def _warnings_of(fn) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def _same_warnings(fn) -> list[str]:
    ours = _warnings_of(lambda: fn(engine))
    if torch is not None:
        assert ours == _warnings_of(lambda: fn(torch))
    return ours


def test_scheduler_step_before_optimizer_step_warns():
    def fn(lib):
        opt = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=1)
        scheduler.step()
        opt.step()
        scheduler.step()

    ours = _same_warnings(fn)
    assert len(ours) == 1 and ours[0].startswith(
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`"
    )


def test_scheduler_after_optimizer_does_not_warn():
    def fn(lib):
        opt = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        for _ in range(3):
            opt.step()
            scheduler.step()

    assert _same_warnings(fn) == []


def test_overridden_optimizer_step_warns():
    def fn(lib):
        opt = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=1)
        opt.step = lambda closure=None: None
        opt.step()
        scheduler.step()

    ours = _same_warnings(fn)
    assert len(ours) == 1 and ours[0].startswith("Seems like `optimizer.step()` has been overridden")


def test_two_schedulers_wrap_the_optimizer_once():
    def fn(lib):
        opt = _optimizer(lib)
        a = lib.optim.lr_scheduler.StepLR(opt, step_size=1)
        b = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        opt.step()
        a.step()
        b.step()

    assert _same_warnings(fn) == []
    opt = _optimizer(engine)
    engine.optim.lr_scheduler.StepLR(opt, step_size=1)
    engine.optim.lr_scheduler.StepLR(opt, step_size=1)
    assert opt.step.__wrapped__ is engine.optim.SGD.step  # one wrapper, around the class's step


def test_wrapped_step_still_runs_the_optimizer_and_returns_the_loss():
    p = engine.nn.Parameter(engine.ones(2))
    opt = engine.optim.SGD([p], lr=0.5)
    engine.optim.lr_scheduler.StepLR(opt, step_size=1)
    loss = opt.step(lambda: (p * p).sum())
    assert loss.item() == 2.0
    (p * p).sum().backward()
    opt.step()
    assert p.tolist() == [0.0, 0.0] and opt._opt_called is True


def test_get_lr_outside_step_warns():
    def fn(lib):
        scheduler = lib.optim.lr_scheduler.StepLR(_optimizer(lib), step_size=2)
        return scheduler.get_lr()

    ours = _same_warnings(fn)
    assert ours == ["To get the last learning rate computed by the scheduler, please use `get_last_lr()`."]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR"])
def test_step_with_epoch_uses_the_closed_form_and_warns(name):
    def run(lib):
        opt = _optimizer(lib)
        scheduler = SCHEDULES[name](lib.optim.lr_scheduler, opt)
        out = []
        for epoch in (3, 7, 1, 12):
            opt.step()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                scheduler.step(epoch)
            out.append((scheduler.get_last_lr(), [str(w.message) for w in caught]))
        return out

    ours = run(engine)
    assert all("epoch parameter in `scheduler.step()` was not necessary" in w[1][0] for w in ours)
    if torch is not None:
        assert ours == run(torch)


def test_resuming_needs_initial_lr():
    def fn(lib):
        with pytest.raises(KeyError) as info:
            lib.optim.lr_scheduler.StepLR(_optimizer(lib), step_size=2, last_epoch=3)
        return str(info.value)

    ours = fn(engine)
    assert "param 'initial_lr' is not specified in param_groups[0]" in ours
    if torch is not None:
        assert ours == fn(torch)


def test_resuming_cosine_starts_where_the_closed_form_is():
    def run(lib):
        opt = _optimizer(lib)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"]
        scheduler = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, last_epoch=2)
        rates = [scheduler.get_last_lr()]
        for _ in range(5):
            opt.step()
            scheduler.step()
            rates.append(scheduler.get_last_lr())
        return rates

    ours = run(engine)
    assert ours[1][0] == pytest.approx(
        0.1 * (1 + math.cos(math.pi * 4 / 6)) / (1 + math.cos(math.pi * 3 / 6))
    )
    if torch is not None:
        assert ours == run(torch)


SCHEDULER_ERRORS = [
    (lambda S, o: S.StepLR(object(), step_size=1), TypeError),
    (lambda S, o: S.OneCycleLR(object(), max_lr=1.0, total_steps=3), TypeError),
    (lambda S, o: S.ReduceLROnPlateau(object()), TypeError),
    (lambda S, o: S.LambdaLR(o, lr_lambda=[lambda e: 1.0]), ValueError),
    (lambda S, o: S.LinearLR(o, start_factor=0.0), ValueError),
    (lambda S, o: S.LinearLR(o, start_factor=1.5), ValueError),
    (lambda S, o: S.LinearLR(o, end_factor=-0.1), ValueError),
    (lambda S, o: S.ReduceLROnPlateau(o, factor=1.0), ValueError),
    (lambda S, o: S.ReduceLROnPlateau(o, mode="up"), ValueError),
    (lambda S, o: S.ReduceLROnPlateau(o, threshold_mode="pct"), ValueError),
    (lambda S, o: S.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=1.0), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=0), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=2.5), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=1.0, epochs=0, steps_per_epoch=3), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=1.0, epochs=2, steps_per_epoch=-3), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1.5), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="exp"), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=[1.0], total_steps=5), ValueError),
    (lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=5, max_momentum=[0.9]), ValueError),
]


@pytest.mark.parametrize("index", range(len(SCHEDULER_ERRORS)))
def test_scheduler_errors(index):
    make, exception = SCHEDULER_ERRORS[index]

    def fn(lib):
        with pytest.raises(exception) as info:
            make(lib.optim.lr_scheduler, _optimizer(lib, lrs=(0.1, 0.2)))
        return str(info.value)

    ours = fn(engine)
    if torch is not None:
        assert ours == fn(torch)


def test_onecycle_without_momentum_support_is_refused():
    def fn(lib):
        opt = lib.optim.Adagrad([lib.nn.Parameter(lib.ones(2))])
        with pytest.raises(ValueError) as info:
            lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=4)
        return str(info.value)

    ours = fn(engine)
    assert ours == "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
    if torch is not None:
        assert ours == fn(torch)


def test_onecycle_past_its_total_steps_raises():
    def fn(lib):
        opt = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            scheduler.step()
        with pytest.raises(ValueError) as info:
            scheduler.step()
        return str(info.value)

    ours = fn(engine)
    assert ours == "Tried to step 4 times. The specified number of total steps is 3"
    if torch is not None:
        assert ours == fn(torch)


def test_plateau_with_a_new_param_group():
    def fn(lib):
        opt = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0])
        opt.add_param_group({"params": [lib.nn.Parameter(lib.ones(1))], "lr": 0.5})
        scheduler.step(1.0)
        with pytest.raises(RuntimeError) as info:
            scheduler.step(2.0)
        return str(info.value)

    ours = fn(engine)
    assert ours.startswith("The number of param groups in the `optimizer` (2) differs")
    if torch is not None:
        assert ours == fn(torch)


def test_schedulers_are_lr_schedulers():
    S = engine.optim.lr_scheduler
    opt = _optimizer(engine)
    for scheduler in (S.StepLR(opt, 2), S.ReduceLROnPlateau(opt), S.LambdaLR(opt, lambda e: 1.0)):
        assert isinstance(scheduler, S.LRScheduler)
    assert S._LRScheduler is S.LRScheduler
    assert set(S.__all__) >= {
        "StepLR",
        "MultiStepLR",
        "ExponentialLR",
        "CosineAnnealingLR",
        "LambdaLR",
        "ReduceLROnPlateau",
        "OneCycleLR",
        "LinearLR",
    }
