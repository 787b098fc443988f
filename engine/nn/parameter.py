"""Parameter: a Tensor subclass that a Module registers as learnable (a leaf requiring grad)."""

from __future__ import annotations

from .. import backend
from ..ops.creation import empty
from ..tensor import Tensor, init_state, wrap


class Parameter(Tensor):
    """Shares `data`'s storage, like torch.nn.Parameter; ops on it return plain Tensors."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        param = Tensor.__new__(cls)
        init_state(param, data._data)
        param._vc = data._vc
        if requires_grad:
            param.requires_grad_(True)
        return param

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        """Everything happens in __new__ (Tensor.__init__ would rebuild the array)."""

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (backend.to_numpy(self._data), self._rg, str(self.device)))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(wrap(self._data.copy()), self._rg)
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out


def _rebuild_parameter(array, requires_grad: bool, device: str = "cpu") -> Parameter:
    return Parameter(wrap(backend.to_device(array.copy(), backend.device(device))), requires_grad)


def zero_grads(params, set_to_none: bool = True) -> None:
    """Grads become None (the default, as in PyTorch 2.x), or are zeroed in place.

    Shared by Module.zero_grad and Optimizer.zero_grad, which torch also keeps alike.
    """
    for p in params:
        if p._grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if p._grad.grad_fn is not None:
                p._grad.detach_()
            else:
                p._grad.requires_grad_(False)
            p._grad.zero_()
