"""The ops: the derivative table (derivatives.py) and the functions that apply it."""

from . import tensor_methods  # noqa: F401  (installs Tensor methods and operators)
