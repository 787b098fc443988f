"""Module full backward hooks: the module's tensor inputs and outputs pass through an identity Function,
BackwardHookFunction, whose nodes' hooks see the gradients at the module's boundary (as PyTorch's
torch.utils.hooks.BackwardHook does).

The output node's pre-hook sees the gradients of the outputs (and runs the backward pre-hooks, which may
replace them); the input node's post-hook then calls the backward hooks with the gradients of the inputs
and the outputs' (they may replace the former). When no input needs a gradient, the backward hooks run
from the output node, with inputs' gradients all None.
"""

from __future__ import annotations

import warnings

from ..autograd import grad_mode
from ..autograd.anomaly import _user_stacklevel
from ..autograd.function import Function
from ..tensor import Tensor


class BackwardHookFunction(Function):
    """The identity on tensors; outputs of inputs that need no gradient are marked non-differentiable."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _spread(positions, values, size: int) -> tuple:
    """`values` put back at their positions among `size` arguments, None elsewhere."""
    out = [None] * size
    for i, value in zip(positions, values):
        out[i] = value
    return tuple(out)


class ModuleBackwardHooks:
    """One call's hooks: set up on the inputs before forward and on the outputs after it."""

    def __init__(self, module, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_positions = self.output_positions = None

    def _through_identity(self, values: tuple, attach):
        """`values` with their tensors passed through BackwardHookFunction; `attach` gets its node."""
        positions = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        tensors = [values[i] for i in positions]
        if not (any(t.requires_grad for t in tensors) and grad_mode.is_grad_enabled()):
            return values, None
        passed = BackwardHookFunction.apply(*tensors)
        passed = passed if isinstance(passed, tuple) else (passed,)
        if not passed:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input Tensors.")
        nodes = [
            t.grad_fn
            for t in passed
            if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"
        ]
        if not nodes:
            raise RuntimeError(
                "Error while setting up backward hooks. Please open an issue with a code sample to reproduce this."
            )
        attach(nodes[0])
        out = list(values)
        for i, t in zip(positions, passed):
            out[i] = t
        return tuple(out), positions

    def setup_input_hook(self, args: tuple) -> tuple:
        def attach(node):
            def hook(grad_inputs, _):
                if self.grad_outputs is None:  # no gradient reached the outputs
                    return None
                grads = _spread(self.input_positions, grad_inputs, self.n_inputs)
                for user_hook in self.hooks:
                    result = user_hook(self.module, grads, self.grad_outputs)
                    if result is None:
                        continue
                    if len(result) != len(grads):
                        raise RuntimeError(
                            "Backward hook returned an invalid number of grad_input, got "
                            f"{len(result)}, but expected {len(grads)}"
                        )
                    grads = result
                self.grad_outputs = None
                return tuple(grads[i] for i in self.input_positions)

            node.register_hook(hook)

        out, self.input_positions = self._through_identity(args, attach)
        self.n_inputs = len(args)
        return out

    def setup_output_hook(self, result):
        def attach(node):
            def hook(grad_outputs):
                self.grad_outputs = _spread(self.output_positions, grad_outputs, self.n_outputs)
                for user_pre_hook in self.pre_hooks:
                    replaced = user_pre_hook(self.module, self.grad_outputs)
                    if replaced is None:
                        continue
                    if len(replaced) != len(self.grad_outputs):
                        raise RuntimeError(
                            "Backward pre hook returned an invalid number of grad_output, got "
                            f"{len(replaced)}, but expected {len(self.grad_outputs)}"
                        )
                    self.grad_outputs = replaced
                grad_outputs = self.grad_outputs
                if self.input_positions is None:  # no input needs a gradient: the hooks run here
                    if self.hooks:
                        warnings.warn(
                            "Full backward hook is firing when gradients are computed with respect to module outputs "
                            "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                            "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                            stacklevel=_user_stacklevel(),
                        )
                    nothing = _spread([], [], self.n_inputs)
                    for user_hook in self.hooks:
                        returned = user_hook(self.module, nothing, self.grad_outputs)
                        if returned is not None and not (
                            isinstance(returned, tuple) and all(g is None for g in returned)
                        ):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient should always "
                                "return None or None for all gradients."
                            )
                    self.grad_outputs = None
                return tuple(grad_outputs[i] for i in self.output_positions)

            node.register_prehook(hook)

        single = not isinstance(result, tuple)
        if not isinstance(result, (Tensor, tuple)):
            warnings.warn(
                "For backward hooks to be called, module output should be a Tensor or a tuple of Tensors but "
                f"received {type(result)}",
                stacklevel=3,
            )
        values = (result,) if single else result
        out, self.output_positions = self._through_identity(values, attach)
        self.n_outputs = len(values)
        return out[0] if single else out
