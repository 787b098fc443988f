"""gradcheck / gradgradcheck: PyTorch's finite-difference checks, plus a structured report.

`gradcheck` and `gradgradcheck` keep torch.autograd's signatures, order of checks and
messages (they return True or raise `GradcheckError`). `check_gradients` runs the same
checks without stopping at the first failure and never raises for errors in user code:
everything it finds goes into a `GradcheckReport`, which the CLI renders.

How a check runs (one `Check` per order):

- Full mode compares the whole Jacobian of every (differentiable output, input requiring
  grad) pair. Numerically: central differences, perturbing one input element at a time
  in place through the tensor's array (no version bump, so the graph of the reference
  forward stays valid) and restoring it bit for bit; the forwards run under `no_grad`
  unless the function needs grad mode for its values (e.g. it calls autograd.grad).
  Analytically: one vector-Jacobian product per output element, run twice to check that
  backward is deterministic.
- Fast mode compares v^T J u for random unit vectors u (per input) and v (per output):
  two forwards per input and one backward per output. A pair that disagrees is
  localised: its full Jacobians are computed and the entries that disagree reported.
- With check_batched_grad (check_batched_forward_grad), the gradients (tangents) of two random
  vectors at once through engine.func.vmap must match the two one by one.
- Then, as in torch, backward with zero grad_outputs must give zero gradients of the
  inputs' shapes and dtypes, and (check_undefined_grad) undefined output gradients must
  not break backward: every output undefined (custom Functions that don't materialise
  grads are called with None, as torch's engine would), then one output at a time.

check_gradients adds what makes its verdicts trustworthy (each finding has a class, report.py):
before any finite difference the forward runs twice more, and one that changes between calls
ends the check as RANDOM FORWARD or NONDETERMINISTIC FORWARD (determinism.py); failing entries
that agree at a larger step or by Richardson extrapolation are NOISE (noise.py), those where f
is not differentiable within eps are KINKs (kinks.py), and what remains is a BUG.

Jacobians are (output numel, input numel) float64 numpy arrays. Messages number outputs
and inputs as torch does (among differentiable outputs / inputs requiring grad), while
`PairReport` indices are positions in the output and input tuples.

Modules, from the entry points down:

- api.py: gradcheck, gradgradcheck, check_gradients (input checks, upcasting; a `Reference`
  moves the numerical side to another function and inputs, e.g. float64 copies).
- second_order.py: the function of (inputs, grad_outputs) that gradgradcheck checks.
- check.py: `Check`, the order of one check's steps.
- state.py: what a check knows (`CheckState`, `Options`) and how it records failures.
- numerical.py / analytical.py: the two sides of each Jacobian.
- compare.py: numerical against analytical per pair, into `PairReport`s.
- determinism.py / random_calls.py: is the forward a function; where it drew random numbers.
- noise.py / kinks.py: mismatches that are the estimate's error, or the function's kink.
- backward_checks.py: zero and undefined grad_outputs.
- batched_checks.py: check_batched_grad / check_batched_forward_grad, gradients of a batch of
  vectors through engine.func.vmap against one by one.
- report.py: GradcheckError, PairReport, GradcheckReport; describing user exceptions.
- messages.py: torch's failure texts; util.py: small shared helpers.
- tensors.py: `Tensors`, the few operations the algorithm needs of a tensor library, and
  `EngineTensors` (the default); `check_gradients(..., tensors=...)` runs the same
  algorithm on another library's tensors (gradcli passes one for torch).
"""

from .api import check_gradients, gradcheck, gradgradcheck
from .report import GradcheckError, GradcheckReport, PairReport
from .state import Reference

__all__ = [
    "GradcheckError",
    "GradcheckReport",
    "PairReport",
    "Reference",
    "check_gradients",
    "gradcheck",
    "gradgradcheck",
]
