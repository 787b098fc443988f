"""Tensor creation: `tensor`, `ones`, `randn`, ... on the default or a given device."""

from __future__ import annotations

import numbers

import numpy

from .. import backend
from ..tensor import Tensor, wrap


def _device(device) -> backend.device:
    return backend.get_default_device() if device is None else backend.placement(device)


def _dtype(dtype, default=None) -> backend.dtype:
    if dtype is None:
        return default or backend.get_default_dtype()
    if isinstance(dtype, backend.dtype):
        return dtype
    return backend.dtype_of(numpy.empty(0, dtype=dtype))


def _infer_dtype(values) -> backend.dtype:
    """What torch.tensor infers from Python data: bool < int64 < default float."""
    kind = "b"
    stack = [values]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, Tensor):
            return v.dtype if kind == "b" or not v.dtype.is_floating_point else v.dtype
        elif isinstance(v, (bool, numpy.bool_)):
            continue
        elif isinstance(v, numbers.Integral):
            kind = "i" if kind == "b" else kind
        elif isinstance(v, numbers.Real):
            return backend.get_default_dtype()
        else:
            raise TypeError(f"Could not infer dtype of {type(v).__name__}")
    return backend.bool_ if kind == "b" else backend.int64


def as_array(data, dtype=None, device=None):
    """An array on `device` holding `data` (copied), with torch's dtype inference."""
    dev = _device(device)
    xp = backend.xp_for(dev)
    if isinstance(data, Tensor):
        array = data._data
        dt = _dtype(dtype, data.dtype)
    elif backend.is_array(data):
        array = data
        dt = _dtype(
            dtype,
            backend.dtype_of(numpy.asarray(data))
            if isinstance(data, numpy.generic)
            else backend.dtype_of(data),
        )
    else:
        if isinstance(data, (list, tuple)) and any(isinstance(v, Tensor) for v in _flat(data)):
            data = _unwrap_nested(data)
        dt = _dtype(dtype, _infer_dtype(data))
        array = numpy.asarray(data, dtype=dt.np)  # Python data is parsed on the host
    if backend.device_of(array) != dev:
        return backend.to_device(array, dev).astype(dt.np, copy=False)  # the transfer made the copy
    return xp.array(array, dtype=dt.np, copy=True)


def _flat(data):
    for v in data:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def _unwrap_nested(data):
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(v) for v in data]
    if isinstance(data, Tensor):
        return data.item() if data.dim() == 0 else data.tolist()
    return data


def _finish(array, requires_grad) -> Tensor:
    out = wrap(array)
    if requires_grad:
        if not out.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        out._rg = True
    return out


def tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(as_array(data, dtype, device), requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if (
        isinstance(data, Tensor)
        and dtype in (None, data.dtype)
        and (device is None or _device(device) == data.device)
    ):
        return data
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array) -> Tensor:
    """Shares memory with the array, as torch.from_numpy does."""
    return wrap(array)


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(n) for n in size)


def _filled(fill, size, dtype, device, requires_grad, default=None):
    dt = _dtype(dtype, default)
    dev = _device(device)
    with backend.device_scope(dev):  # CuPy allocates on its current device
        array = backend.xp_for(dev).full(_size(size), fill, dtype=dt.np)
    return _finish(array, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(0, size, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    default = _infer_dtype(fill_value) if dtype is None else None
    return _filled(
        fill_value, (size,) if isinstance(size, int) else tuple(size), dtype, device, requires_grad, default
    )


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    dev = _device(device)
    with backend.device_scope(dev):
        array = backend.xp_for(dev).eye(n, n if m is None else m, dtype=_dtype(dtype).np)
    return _finish(array, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    default = _infer_dtype([start, end, step])
    dt = _dtype(dtype, default)
    dev = _device(device)
    with backend.device_scope(dev):
        array = backend.xp_for(dev).arange(start, end, step).astype(dt.np)
    return _finish(array, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    dev = _device(device)
    if dtype is backend.bool_:
        raise NotImplementedError(f"\"linspace_{dev.type}\" not implemented for 'Bool'")
    with backend.device_scope(dev):
        array = backend.xp_for(dev).linspace(start, end, steps).astype(_dtype(dtype).np)
    return _finish(array, requires_grad)


def _random(kind, size, dtype, device, requires_grad, generator=None):
    dev = _device(device)
    dt = _dtype(dtype)
    gen = backend.generator(dev)
    shape = _size(size)
    with backend.device_scope(dev):
        if kind == "normal":
            array = (
                gen.standard_normal(shape, dtype=dt.np)
                if dt.np.itemsize >= 4
                else gen.standard_normal(shape).astype(dt.np)
            )
        else:
            array = gen.random(shape, dtype=dt.np) if dt.np.itemsize >= 4 else gen.random(shape).astype(dt.np)
    return _finish(array, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    return _random("uniform", size, dtype, device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    return _random("normal", size, dtype, device, requires_grad)


def randint(
    low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False
) -> Tensor:
    """randint(high, size) or randint(low, high, size): integers in [low, high), int64 unless told."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
    dev = _device(device)
    gen = backend.generator(dev)
    with backend.device_scope(dev):
        array = gen.integers(low, high, size=_size((size,)))
    return _finish(array.astype(_dtype(dtype, backend.int64).np), requires_grad)


def randperm(n, *, dtype=None, device=None) -> Tensor:
    dev = _device(device)
    gen = backend.generator(dev)
    with backend.device_scope(dev):
        if hasattr(gen, "permutation"):
            perm = gen.permutation(n)
        else:  # CuPy's Generator has no permutation: the order that sorts uniform draws is one
            perm = gen.random(n).argsort()
    return wrap(perm.astype(_dtype(dtype, backend.int64).np))


def _like(maker):
    def like(input, *, dtype=None, device=None, requires_grad=False, **kwargs):
        return maker(
            input.shape,
            dtype=dtype or input.dtype,
            device=device or input.device,
            requires_grad=requires_grad,
            **kwargs,
        )

    like.__name__ = maker.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(
        input.shape,
        fill_value,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
    )


def manual_seed(seed: int):
    backend.manual_seed(seed)
    return None
