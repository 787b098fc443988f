"""What the registry says about one op: its samples and which properties each is checked for.

A `Sample` is one way of calling the op: `call(lib, *tensors)` runs it on `lib` (the engine or
torch) and returns a tensor or a tuple of them (the first floating one is the output checked);
`kinds` gives one `(domain, shape)` per tensor argument (domains: tests/opcheck.py's DOMAINS, or
a function `rng, n -> values`). Float inputs are made float64 and require grad; int and bool
inputs do not. The flags say which property tests (tests/ops/test_*.py) apply to the sample;
`skips` names a property the sample is known to fail, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

NUMPY = "numpy"  # a sample's ref: its own call, run with lib=numpy on the input arrays

PROPERTIES = (
    "forward",
    "grads",
    "forward_ad",
    "forward_ad_torch",
    "double_backward",
    "double_backward_squared",
    "torch_parity",
    "torch_parity_float32",
    "torch_parity_in_float32",
    "torch_parity_graph",
    "device_parity",
)


@dataclass(frozen=True)
class Sample:
    name: str
    call: Callable
    kinds: list
    node: str | None = None  # grad_fn.name() of the output
    ref: Callable | str | None = None  # the forward in numpy, on the input arrays (or NUMPY)
    ref_tol: tuple[float, float] = (1e-12, 1e-12)  # rtol, atol against `ref`
    grad: bool = True  # the output has a gradient (argmax, all: no)
    gradgrad: bool = True  # second derivative by finite differences of the first
    squared: bool = False  # also the second derivative of output * output (non-zero for linear ops)
    torch_tol: tuple[float, float] = (1e-7, 1e-9)  # rtol, atol against torch
    float32_first: bool = False  # torch's promotion with the first tensor in float32 (or its refusal)
    in_float32: bool = False  # also torch's values and gradients with every input in float32
    skips: dict[str, str] = field(default_factory=dict)  # property -> why it is skipped

    @property
    def dtype(self) -> str:
        """The first input's dtype, for the test id."""
        domain = self.kinds[0][0] if self.kinds else "r"
        return (
            {"int": "int64", "bool": "bool"}.get(domain, "float64") if isinstance(domain, str) else "float64"
        )

    @property
    def differentiable(self) -> bool:
        return self.grad and any(not isinstance(d, str) or d not in ("int", "bool") for d, _ in self.kinds)

    def checks(self, prop: str) -> bool:
        """Whether `prop` applies to this sample."""
        return {
            "forward": self.ref is not None or self.node is not None,
            "grads": self.differentiable,
            "forward_ad": self.differentiable,
            "forward_ad_torch": self.differentiable,
            "double_backward": self.differentiable and self.gradgrad,
            "double_backward_squared": self.differentiable and self.squared,
            "torch_parity": True,
            "torch_parity_float32": self.float32_first,
            "torch_parity_in_float32": self.in_float32,
            "torch_parity_graph": True,
            "device_parity": True,
        }[prop]


@dataclass(frozen=True)
class OpInfo:
    name: str  # the public name: engine.<name>, Tensor.<name>, linalg.<name>, nn.functional.<name>
    samples: list[Sample]

    def sample_id(self, sample: Sample) -> str:
        return "-".join(part for part in (self.name, sample.dtype, sample.name) if part)


def params(ops: list[OpInfo], prop: str) -> Iterator:
    """One pytest.param per (op, sample) that `prop` applies to, id `op-dtype-sample`."""
    assert prop in PROPERTIES, prop
    for op in ops:
        for sample in op.samples:
            if sample.checks(prop):
                marks = [pytest.mark.skip(reason=sample.skips[prop])] if prop in sample.skips else []
                yield pytest.param(sample, id=op.sample_id(sample), marks=marks)
