"""Full mode's numerical Jacobian with every perturbation at once (the design space of vmap).

The function runs twice under a recording observer, at x + eps u and x - eps u (u random
signs and sizes: every element moved both ways, no two by the same amount). What it did is a list of table rows; rows fed by the
perturbed input are replayed on a leading batch of perturbed inputs through their batching
rules (ops/batching.py), in chunks that keep memory bounded. Anything the replay could get
wrong sends the caller back to one forward per perturbation (None here): the two runs
differing in their rows, attrs or the values of anything not derived through the table (a
detach, a mask, an `.item()` steering the code, a custom Function), an in-place change, a
backward inside the function, a row without a rule, or replayed values not agreeing with the
recorded ones.
"""

from __future__ import annotations

from typing import Any

import numpy

from ...ops.batching import Unbatchable, row_of, run_batched
from ...tensor import Tensor
from .. import anomaly
from .tensors import EngineTensors
from .util import as_tuple

#: a chunk holds at most this many elements in any one batched array
CHUNK_ELEMENTS = 1 << 21


class _Recorder(anomaly.Observer):
    """Every node the forward makes, with its inputs and output; whether anything disqualifies it."""

    def __init__(self) -> None:
        self.steps: list[tuple] = []
        self.spoiled = False

    def forward(self, node, inputs: tuple, out, trace: list) -> None:
        self.steps.append((node, inputs, out))

    def bumped(self, tensor) -> None:
        self.spoiled = True

    def backward_begin(self, roots, retain_graph, inputs, capture) -> None:
        self.spoiled = True


class _Program:
    """One recorded forward, as rows to replay: each step's op, argument refs and attrs.

    An argument ref is ("x",), ("step", k) or ("const", value); `outputs` are refs too.
    """

    def __init__(self, steps: list, target: Tensor, outs: tuple, keys: list[int]) -> None:
        index = {id(target): ("x",)}
        self.ops, self.args, self.attrs, self.specs = [], [], [], []
        self.constants = []  # the inputs of the steps not fed by x: the other run must see the same
        for node, inputs, out in steps:
            op = row_of(type(node))
            if op is None or not isinstance(out, Tensor):
                raise Unbatchable(type(node).__name__)
            refs = [index.get(id(x), ("const", _value(x))) for x in inputs]
            if not any(r[0] != "const" for r in refs):
                self.constants.append(refs)
                continue  # not fed by x: its output is a constant like any other
            index[id(out)] = ("step", len(self.ops))
            self.ops.append(op)
            self.args.append(refs)
            self.attrs.append(node._attrs)
            self.specs.append((out._data.shape, out._data.dtype))
        self.outputs = []
        for key in keys:
            o = outs[key] if key < len(outs) else None
            if not isinstance(o, Tensor):
                raise Unbatchable("output")
            self.outputs.append(index.get(id(o), ("const", _value(o))))
        self._steps = steps  # the recorded tensors stay alive, so ids stay unique

    def same_as(self, other: _Program) -> bool:
        return (
            [op.node for op in self.ops] == [op.node for op in other.ops]
            and _same(self.args, other.args)
            and _same(self.attrs, other.attrs)
            and _same(self.outputs, other.outputs)
            and _same(self.constants, other.constants)
            and self.specs == other.specs
        )

    def replay(self, xs: numpy.ndarray) -> list[numpy.ndarray]:
        """The outputs for a batch of inputs `xs` (batch, *x's shape), each (batch, *output shape)."""
        values: list[Any] = []
        for op, refs, attrs, (shape, dtype) in zip(self.ops, self.args, self.attrs, self.specs):
            datas = [self._get(r, xs, values) for r in refs]
            batched = [r[0] != "const" for r in refs]
            values.append(run_batched(op, datas, batched, attrs, shape, dtype))
        out = []
        for r in self.outputs:
            v = self._get(r, xs, values)
            out.append(v if r[0] != "const" else numpy.broadcast_to(v, (len(xs), *numpy.shape(v))))
        return out

    @staticmethod
    def _get(ref: tuple, xs: numpy.ndarray, values: list):
        return xs if ref[0] == "x" else values[ref[1]] if ref[0] == "step" else ref[1]


def _value(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def _same(a: Any, b: Any) -> bool:
    """Equal values, arrays by their bits and shapes (nan equal to nan)."""
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, numpy.ndarray) or isinstance(b, numpy.ndarray):
        return (
            isinstance(a, numpy.ndarray)
            and isinstance(b, numpy.ndarray)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and numpy.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    try:
        return type(a) is type(b) and bool(a == b or (a != a and b != b))
    except Exception:
        return False


def _record(state, array: numpy.ndarray, target: Tensor, point: numpy.ndarray, keys: list[int]) -> tuple:
    """Run the function with the input at `point`: its program and the outputs' values."""
    recorder = _Recorder()
    previous = anomaly.observer
    anomaly.observer = recorder
    array[...] = point
    try:
        with anomaly.record_sites(), state.tensors.enable_grad():
            outs = as_tuple(state.numerical_func(*state.numerical_inputs))
    finally:
        anomaly.observer = previous
    if recorder.spoiled:
        raise Unbatchable("in-place change or backward")
    program = _Program(recorder.steps, target, outs, keys)
    return program, [numpy.array(_value(outs[k])) for k in keys]


def batched_differences(state, tensor: Any, outputs: list[tuple[int, Any]]) -> list[numpy.ndarray] | None:
    """Each output's values at x - eps e_i and x + eps e_i, as (minus, plus) buffers (n, *shape),
    or None where the perturbations must run one by one (see the module docstring).

    Called before the plain loop, with the input's array restored whatever happens here."""
    tensors = state.tensors
    if (
        not isinstance(tensors, EngineTensors)
        or state.numerics_need_grad
        or anomaly.observer is not None
        or anomaly.state[0]
        or tensors.storage(tensor).__class__ is not numpy.ndarray
    ):
        return None
    array = tensors.storage(tensor)
    saved = array.copy()
    keys = [k for k, _ in outputs]
    eps = state.opts.eps
    # random signs and sizes: what depends on x outside the table differs between the two runs
    rng = numpy.random.default_rng(0)
    u = numpy.where(rng.random(array.shape) < 0.5, -1.0, 1.0) * rng.uniform(0.5, 1.5, array.shape)
    try:
        above, at_above = _record(state, array, tensor, saved + eps * u, keys)
        below, at_below = _record(state, array, tensor, saved - eps * u, keys)
        if not above.same_as(below):
            return None
        checks = [(saved + eps * u, at_above), (saved - eps * u, at_below)]
        return _differences(state, above, saved, checks, outputs, CHUNK_ELEMENTS)
    except Exception:  # noqa: BLE001 - whatever went wrong, the plain loop decides (and reports it)
        return None
    finally:
        array[...] = saved


def _differences(
    state, program: _Program, saved: numpy.ndarray, checks: list, outputs: list, chunk_elements: int
) -> tuple[list, list] | None:
    """The replay in chunks of perturbations (the first also replaying the recorded `checks`)."""
    eps = state.opts.eps
    shape_of = state.tensors.shape
    n = saved.size
    for (_, o), value in zip(outputs, checks[0][1]):
        if value.shape != shape_of(o):
            return None  # the plain loop reports the changed shape
    widest = max([saved.size, *(numpy.prod(s, dtype=int) for s, _ in program.specs), 1])
    chunk = max(1, chunk_elements // (2 * widest))
    minus = [numpy.empty((n, *shape_of(o))) for _, o in outputs]
    plus = [numpy.empty((n, *shape_of(o))) for _, o in outputs]
    flat = saved.reshape(-1)
    # the first batch also replays the recorded points, whose outputs must come back
    extra = numpy.stack([point.astype(saved.dtype) for point, _ in checks])
    for start in range(0, n, chunk):
        rows = numpy.arange(start, min(start + chunk, n))
        xs = numpy.broadcast_to(saved, (2 * len(rows), *saved.shape)).copy()
        flat_xs = xs.reshape(len(xs), -1)
        flat_xs[numpy.arange(len(rows)), rows] = flat[rows] - eps
        flat_xs[numpy.arange(len(rows), 2 * len(rows)), rows] = flat[rows] + eps
        if start == 0:
            xs = numpy.concatenate([xs, extra])
        values = program.replay(xs)
        if start == 0:
            for k, v in enumerate(values):
                for j, (_, recorded) in enumerate(checks):
                    if not numpy.allclose(
                        v[2 * len(rows) + j], recorded[k], rtol=1e-10, atol=0, equal_nan=True
                    ):
                        return None
        for k, v in enumerate(values):
            minus[k][rows] = v[: len(rows)]
            plus[k][rows] = v[len(rows) : 2 * len(rows)]
        for _ in rows:
            state.column_done()
    return minus, plus
