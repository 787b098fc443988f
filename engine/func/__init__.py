"""engine.func: torch.func's composable transforms (vmap, grad, vjp, jvp, linearize, jacrev, jacfwd, hessian, functional_call)."""

from . import batched_grads  # noqa: F401 - hands autograd.grad its batched gradients
from .functional_call import functional_call
from .grad import grad, grad_and_value, vjp
from .jacfwd import hessian, jacfwd
from .jacrev import jacrev
from .jvp import jvp
from .linearize import linearize
from .vmap import vmap

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "vjp",
    "vmap",
]
