"""engine.func: torch.func's composable transforms (vmap, grad, vjp, jacrev, functional_call)."""

from . import batched_grads  # noqa: F401 - hands autograd.grad its batched gradients
from .functional_call import functional_call
from .grad import grad, grad_and_value, vjp
from .jacrev import jacrev
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "jacrev", "vjp", "vmap"]
