"""Every op the engine differentiates, with the samples each property test runs (PyTorch's OpInfo idea).

Adding an op, or a way of calling one: an `OpInfo` (or a `Sample` of an existing one) in the module
of its family. Each property is one test module parametrised over this list:

- test_forward.py            values against a numpy reference (`ref`), the output's node name (`node`)
- test_grads.py              first derivatives against central finite differences
- test_forward_ad.py         forward AD's tangents against finite differences, against the backward
                             (u·Jv == Jᵀu·v), and against torch 2.13's forward AD (forward_ad_torch)
- test_double_backward.py    second derivatives (of the output, and with `squared` of its square)
- test_torch_parity.py       torch 2.13's values, dtypes, node names (of the whole graph) and gradients,
                             with a float32 first operand, in float32 (marker torch_parity)
- test_device_parity.py      the same on the CuPy stand-in (tests/fake_cupy.py) and on CUDA where present
"""

from __future__ import annotations

from ops import linalg, nn, pointwise, reductions, shaping
from ops.opinfo import OpInfo, params

REGISTRY: list[OpInfo] = pointwise.OPS + reductions.OPS + shaping.OPS + linalg.OPS + nn.OPS


def _check_unique() -> None:
    names = [op.name for op in REGISTRY]
    assert len(set(names)) == len(names), "an op is registered twice"
    ids = [op.sample_id(s) for op in REGISTRY for s in op.samples]
    assert len(set(ids)) == len(ids), sorted({i for i in ids if ids.count(i) > 1})


_check_unique()


def cases(prop: str) -> list:
    """The pytest params of every sample `prop` applies to."""
    return list(params(REGISTRY, prop))
