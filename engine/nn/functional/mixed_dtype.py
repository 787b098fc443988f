"""torch's dtype rule for a normalization's parameters on the CPU (ATen's mixed_dtype.h).

The first parameter given decides: of the input's dtype, every other must be too ("expected
scalar type Double but found Float"); of another dtype, the call is "mixed", which only a
bfloat16 or float16 input with float32 parameters is allowed to be. CUDA kernels have rules of
their own, not copied here.
"""

from __future__ import annotations

from ...tensor import Tensor


def check_parameters(input: Tensor, *parameters: Tensor | None) -> None:
    """Raise torch's error where `parameters` (in ATen's order, None for absent) do not fit `input`."""
    given = [p for p in parameters if p is not None]
    if input.device.type != "cpu" or not given or all(p.dtype is input.dtype for p in given):
        return
    if given[0].dtype is input.dtype:
        odd = next(p for p in given if p.dtype is not input.dtype)
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_type} but found {odd.dtype.scalar_type}"
        )
    if any(p.dtype.name != "float32" for p in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype.name not in ("bfloat16", "float16"):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
