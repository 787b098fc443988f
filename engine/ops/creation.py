"""Tensor creation: `tensor`, `ones`, `randn`, ... on the default or a given device."""

from __future__ import annotations

import math
import numbers
import warnings

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
        return backend.cast(backend.to_device(array, dev), dt, copy=False)  # the transfer made the copy
    return backend.cast(array, dt) if dt is backend.bfloat16 else xp.array(array, dtype=dt.np, copy=True)


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


def _finish(array, requires_grad, dt: backend.dtype | None = None) -> Tensor:
    """The new tensor; `dt` bfloat16: the values rounded to it (made in float32 before)."""
    if dt is backend.bfloat16:
        array = backend.round_to_bfloat16(array)
    out = wrap(array)
    if requires_grad:
        if not out.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        out._rg = True
    return out


COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than engine.tensor(sourceTensor)."
)


def tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT_WARNING, UserWarning, stacklevel=2)
    return copy_of(data, dtype, device, requires_grad)


def copy_of(data, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`tensor(data)` without its warning for a Tensor: for the constructors that copy one quietly."""
    return _finish(as_array(data, dtype, device), requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if (
        isinstance(data, Tensor)
        and dtype in (None, data.dtype)
        and (device is None or _device(device) == data.device)
    ):
        return data
    return copy_of(data, dtype, device)


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
    return _finish(array, requires_grad, dt)


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
    dt = _dtype(dtype)
    with backend.device_scope(dev):
        array = backend.xp_for(dev).eye(n, n if m is None else m, dtype=dt.np)
    return _finish(array, requires_grad, dt)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    default = _infer_dtype([start, end, step])
    dt = _dtype(dtype, default)
    dev = _device(device)
    with backend.device_scope(dev):
        array = backend.xp_for(dev).arange(start, end, step).astype(dt.np)
    return _finish(array, requires_grad, dt)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    dev = _device(device)
    dt = _dtype(dtype)
    if dtype is backend.bool_:
        raise NotImplementedError(f"\"linspace_{dev.type}\" not implemented for 'Bool'")
    with backend.device_scope(dev):
        array = backend.xp_for(dev).linspace(start, end, steps).astype(dt.np)
    return _finish(array, requires_grad, dt)


_RANDOM_KERNELS = {"normal": "normal_kernel", "uniform": "check_uniform_bounds"}


def _random(kind, size, dtype, device, requires_grad, generator=None):
    dev = _device(device)
    dt = _dtype(dtype)
    shape = _size(size)
    if not dt.is_floating_point and math.prod(shape):
        raise not_implemented_for(_random_kernel(kind, dev), dt)
    gen = backend.generator(dev)
    draw = gen.standard_normal if kind == "normal" else gen.random
    shape = backend.drawn_shape(shape)
    with backend.device_scope(dev):
        # numpy draws float32 and float64; other dtypes are drawn in float64, then cast
        array = draw(shape, dtype=dt.np) if dt in (backend.float32, backend.float64) else draw(shape)
    out = _finish(array if dt is backend.bfloat16 else array.astype(dt.np, copy=False), requires_grad, dt)
    return backend.drawn(out)


def _random_kernel(kind: str, dev: backend.device) -> str:
    """The ATen kernel torch names when a random fill meets an integer dtype."""
    name = _RANDOM_KERNELS[kind]
    return f"{name}_{dev.type}" if kind == "normal" else name


def not_implemented_for(kernel: str, dt: backend.dtype) -> NotImplementedError:
    """ATen's dispatch error: the kernel has no version for this dtype (a RuntimeError too)."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_type}'")


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
    dt = _dtype(dtype, backend.int64)
    if dt is backend.bool_:
        raise RuntimeError("to - 1 is out of bounds for bool")
    dev = _device(device)
    gen = backend.generator(dev)
    with backend.device_scope(dev):
        array = gen.integers(low, high, size=backend.drawn_shape(_size((size,))))
    return backend.drawn(_finish(array if dt is backend.bfloat16 else array.astype(dt.np), requires_grad, dt))


def randperm(n, *, dtype=None, device=None) -> Tensor:
    dt = _dtype(dtype, backend.int64)
    if dt is backend.bool_:
        raise not_implemented_for("randperm", dt)
    dev = _device(device)
    gen = backend.generator(dev)
    shape = backend.drawn_shape((n,))
    with backend.device_scope(dev):
        if len(shape) > 1:  # inside vmap's "different": a permutation per example
            perm = gen.random(shape).argsort(axis=-1)
        elif hasattr(gen, "permutation"):
            perm = gen.permutation(n)
        else:  # CuPy's Generator has no permutation: the order that sorts uniform draws is one
            perm = gen.random(n).argsort()
    return backend.drawn(_finish(perm if dt is backend.bfloat16 else perm.astype(dt.np), False, dt))


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
