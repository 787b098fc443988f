"""A numpy-backed stand-in for the parts of CuPy the engine calls. It is NOT CUDA.

It exists so the CPU-only suite can run the engine's device paths (`backend.xp_of`,
`device_of`, explicit transfers, the `x.__class__ is numpy.ndarray` fast paths falling
through to the generic branch) and catch numpy-only code. It copies the CuPy behaviours
that such code trips over:

- `ndarray` wraps a numpy array and is not a numpy.ndarray (isinstance and `__class__`
  checks for numpy fail, as they do for cupy.ndarray);
- implicit conversion to numpy raises CuPy's TypeError (`numpy.asarray(x)`), and so does
  mixing a numpy array into an operation, a function or an assignment (CuPy may copy an
  assigned numpy array instead; the stand-in refuses, so every transfer stays explicit);
- numpy's ufuncs run on device arrays (as CuPy's NEP 13 support does), but numpy's other
  functions and ufunc methods (`numpy.where(x)`, `numpy.add.at`) raise: stricter than CuPy,
  which dispatches some of them, because the engine's rule is to call them through `xp`;
- reductions and integer indexing give 0-d arrays, not numpy scalars;
- `reshape(..., copy=...)` is refused and `random.default_rng` has no `permutation`;
- broadcast views (`broadcast_to`) can be written, as CuPy's can (numpy's are read-only);
- `array.data` is a MemoryPointer: `.ptr`, `.mem` (the allocation: `.ptr`, `.size`) and `+ n`;
  `ndarray(shape, dtype, memptr=, strides=)` and `lib.stride_tricks.as_strided` make views of an
  allocation that have no `base`, as CuPy's do;
- `.get()`, `.device.id`, `cuda.Device`, `cuda.runtime.getDeviceCount`, `linalg` (numpy's) and
  `cupyx.scatter_add` exist.

Not modelled: asynchrony and streams, several GPUs (every array is on device 0), CuPy's
own kernels and numerics (the values are numpy's, so results equal the CPU's exactly; and
numpy's dtypes pass on their metadata, the engine's bfloat16 tag, where CuPy's kernels may
not), the memory pool's rounding of allocation sizes, memory limits, and `cupyx.scipy` (the
engine's erf falls back to its array-op series).
"""

from __future__ import annotations

import types
from collections.abc import Callable

import numpy

IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array "
    "explicitly."
)
_SCALARS = (bool, int, float, complex, numpy.generic)


def _unsupported(value) -> TypeError:
    return TypeError(f"Unsupported type {type(value)}")


def _unwrap(value, host_arrays_ok: bool = False):
    """The numpy array inside a stand-in array (recursively in lists / tuples); numpy arrays refused."""
    if isinstance(value, ndarray):
        return value._a
    if isinstance(value, numpy.ndarray):
        if not host_arrays_ok:
            raise _unsupported(value)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, host_arrays_ok) for v in value)
    return value


def _wrap(value):
    """numpy results as stand-in arrays; numpy scalars become 0-d arrays, as CuPy returns them."""
    if isinstance(value, numpy.ndarray):
        out = object.__new__(ndarray)
        out._a = value
        return out
    if isinstance(value, numpy.generic):
        return _wrap(numpy.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _function(fn: Callable) -> Callable:
    """A numpy function (or bound method) taking and returning stand-in arrays; `out=` is honoured."""

    def call(*args, **kwargs):
        out = kwargs.get("out")
        result = fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return out if isinstance(out, ndarray) else _wrap(result)

    call.__name__ = getattr(fn, "__name__", "function")
    return call


class _DeviceRef:
    """`array.device`: CuPy's cuda.Device of an array; only `.id` is read."""

    __slots__ = ("id",)

    def __init__(self, index: int) -> None:
        self.id = index


def _allocation(array: numpy.ndarray) -> numpy.ndarray:
    """The numpy array owning the memory `array` looks at (as_strided's views hold it one step further)."""
    while True:
        base = array.base
        if not isinstance(base, numpy.ndarray):
            base = getattr(base, "base", None)
        if not isinstance(base, numpy.ndarray):
            return array
        array = base


class _Memory:
    """`array.data.mem`: the allocation (CuPy's BaseMemory), with its `ptr` and `size` in bytes.

    The size is the one asked for, as CuPy's raw allocator gives it; CuPy's default memory pool
    rounds it up to a multiple of 512 bytes (see the engine's backend.storage_bounds)."""

    __slots__ = ("owner", "ptr", "size")

    def __init__(self, owner: numpy.ndarray) -> None:
        self.owner = owner
        self.ptr = owner.__array_interface__["data"][0]
        self.size = owner.nbytes


class _MemoryPointer:
    """`array.data`: CuPy's MemoryPointer, a place (`ptr`) in an allocation (`mem`); `+ n` moves it n bytes."""

    __slots__ = ("mem", "ptr")

    def __init__(self, mem: _Memory, ptr: int) -> None:
        self.mem = mem
        self.ptr = ptr

    def __add__(self, offset: int) -> _MemoryPointer:
        return _MemoryPointer(self.mem, self.ptr + int(offset))


class ndarray:
    """A device array: a numpy array the engine may only reach through this module's functions."""

    __slots__ = ("_a",)

    def __new__(cls, shape, dtype=float, memptr=None, strides=None):
        # CuPy's constructor: a new allocation, or (memptr) a view of an existing one at any strides,
        # which CuPy makes without a `base`: _AddressedView
        return object.__new__(ndarray if memptr is None else _AddressedView)

    def __init__(self, shape, dtype=float, memptr=None, strides=None) -> None:
        if memptr is None:
            self._a = numpy.empty(shape, dtype)
            return
        owner = memptr.mem.owner
        self._a = numpy.ndarray(
            shape, dtype=dtype, buffer=owner, offset=memptr.ptr - memptr.mem.ptr, strides=strides
        )

    # -- what CuPy adds to numpy's interface
    @property
    def device(self) -> _DeviceRef:
        return _DeviceRef(0)

    def get(self) -> numpy.ndarray:
        """The explicit device -> host copy."""
        return self._a.copy()

    @property
    def data(self) -> _MemoryPointer:
        return _MemoryPointer(_Memory(_allocation(self._a)), self._a.__array_interface__["data"][0])

    def reshape(self, *shape, order: str = "C"):  # no `copy=`: CuPy's reshape has none
        return _wrap(self._a.reshape(*shape, order=order))

    # -- everything else is numpy's, on the wrapped array
    def __getattr__(self, name: str):
        if name == "_a" or name.startswith("__"):  # `_a` unset (copy, pickle); no __array_interface__
            raise AttributeError(name)
        attr = getattr(self._a, name)
        return _function(attr) if callable(attr) else _wrap(attr) if isinstance(attr, numpy.ndarray) else attr

    def __array__(self, dtype=None, copy=None):
        raise TypeError(IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # CuPy runs numpy's ufuncs on device arrays (NEP 13), e.g. numpy.float64(2) * x; ufunc methods
        # (numpy.add.at, ...) are refused here: the engine goes through xp / backend for those.
        if method != "__call__" or any(isinstance(x, numpy.ndarray) for x in inputs):
            return NotImplemented  # numpy then raises TypeError, as CuPy does for mixed operands
        out = kwargs.get("out")  # always a tuple in this protocol
        result = getattr(ufunc, method)(*_unwrap(inputs), **{k: _unwrap(v) for k, v in kwargs.items()})
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types_, args, kwargs):
        # Stricter than CuPy, which dispatches the numpy functions it implements (NEP 18): engine code
        # must call xp.<function>, so numpy.<function>(device array) is an error here.
        raise TypeError(f"numpy.{func.__name__} called on a device array: use the array module (xp)")

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key, host_arrays_ok=True)])  # CuPy uploads host index arrays

    def __setitem__(self, key, value) -> None:
        self._a[_unwrap(key, host_arrays_ok=True)] = _unwrap(value)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return (_wrap(self._a[i]) for i in range(len(self._a)))

    def __bool__(self) -> bool:
        return bool(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __format__(self, spec: str) -> str:
        return self._a.__format__(spec)

    def __repr__(self) -> str:
        return repr(self._a)

    __str__ = __repr__

    def __neg__(self):
        return _wrap(-self._a)

    def __pos__(self):
        return _wrap(+self._a)

    def __abs__(self):
        return _wrap(abs(self._a))

    def __invert__(self):
        return _wrap(~self._a)


def _operator(name: str):
    def op(self, other):
        if isinstance(other, ndarray):
            other = other._a
        elif isinstance(other, numpy.ndarray):
            raise _unsupported(other)
        elif not isinstance(other, _SCALARS):
            return NotImplemented  # e.g. a Tensor: its reflected operator runs
        result = getattr(self._a, name)(other)
        if result is NotImplemented:
            return result
        return self if name.startswith("__i") else _wrap(result)

    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor"):
    for _form in (f"__{_name}__", f"__r{_name}__", f"__i{_name}__"):
        setattr(ndarray, _form, _operator(_form))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(ndarray, f"__{_name}__", _operator(f"__{_name}__"))
ndarray.__hash__ = None  # arrays are unhashable


class _AddressedView(ndarray):
    """An array CuPy makes on a MemoryPointer (`cupy.ndarray(..., memptr=...)`, `as_strided`): a view of
    another array's memory that, unlike numpy's views, has no `base`."""

    __slots__ = ()

    @property
    def base(self) -> None:
        return None


# ------------------------------------------------------------------------------ modules


class _Generator:
    """cupy.random.Generator's methods the engine calls (no `permutation`, as in CuPy)."""

    def __init__(self, seed) -> None:
        self._rng = numpy.random.default_rng(seed)

    def random(self, size=None, dtype=numpy.float64):
        return _wrap(numpy.asarray(self._rng.random(size, dtype=dtype)))

    def standard_normal(self, size=None, dtype=numpy.float64):
        return _wrap(numpy.asarray(self._rng.standard_normal(size, dtype=dtype)))

    def integers(self, low, high=None, size=None, dtype=numpy.int64, endpoint=False):
        return _wrap(numpy.asarray(self._rng.integers(low, high, size, dtype=dtype, endpoint=endpoint)))


class _CudaDevice:
    """cupy.cuda.Device: a context manager making the device current; only device 0 exists here."""

    def __init__(self, module: FakeCupy, index: int | None = 0) -> None:
        self.id = 0 if index is None else int(index)
        if not 0 <= self.id < module.device_count:
            raise RuntimeError("cudaErrorInvalidDevice: invalid device ordinal")

    def __enter__(self) -> _CudaDevice:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def use(self) -> None:
        return None

    def synchronize(self) -> None:
        return None


# cupy.linalg's functions the engine calls (numpy's values; CuPy answers a singular matrix with inf / nan
# rather than raising, which is not modelled)
LINALG = ("cholesky", "det", "eigh", "eigvalsh", "inv", "qr", "slogdet", "solve", "svd")


class FakeCupy:
    """The stand-in `cupy` module: named functions below, any other numpy function wrapped on demand."""

    def __init__(self, device_count: int = 1) -> None:
        self.__name__ = "fake_cupy"
        self.device_count = device_count
        self.ndarray = ndarray
        self.cuda = types.SimpleNamespace(
            Device=lambda index=0: _CudaDevice(self, index),
            runtime=types.SimpleNamespace(getDeviceCount=lambda: self.device_count),
        )
        self.random = types.SimpleNamespace(default_rng=_Generator)
        self.linalg = types.SimpleNamespace(
            LinAlgError=numpy.linalg.LinAlgError,
            **{name: _function(getattr(numpy.linalg, name)) for name in LINALG},
        )
        self.lib = types.SimpleNamespace(
            stride_tricks=types.SimpleNamespace(
                as_strided=lambda x, shape=None, strides=None: ndarray(
                    x.shape if shape is None else shape,
                    x.dtype,
                    x.data,
                    x.strides if strides is None else strides,
                )
            )
        )

    @staticmethod
    def asarray(value, dtype=None):
        """Host data is copied to the device; a device array is returned as it is (cast if asked)."""
        if isinstance(value, ndarray):
            return value if dtype is None else _wrap(value._a.astype(dtype, copy=False))
        return _wrap(numpy.array(value, dtype=dtype, copy=True))

    @staticmethod
    def array(value, dtype=None, copy=True):
        inner = value._a if isinstance(value, ndarray) else value
        return _wrap(
            numpy.array(inner, dtype=dtype, copy=True if copy or not isinstance(value, ndarray) else None)
        )

    @staticmethod
    def broadcast_to(array, shape):
        """A broadcast view that can be written, as CuPy's are (numpy's are read-only); arrays only, as in CuPy."""
        if not isinstance(array, ndarray):
            raise TypeError(
                f"Argument 'array' has incorrect type (expected cupy.ndarray, got {type(array).__name__})"
            )
        view = numpy.broadcast_to(array._a, shape)
        return _wrap(numpy.lib.stride_tricks.as_strided(array._a, view.shape, view.strides))

    @staticmethod
    def asnumpy(value):
        return value.get() if isinstance(value, ndarray) else numpy.asarray(value)

    def __getattr__(self, name: str):
        attr = getattr(numpy, name)
        if isinstance(attr, type) or not callable(attr):
            return attr  # dtypes, iinfo, inf, ...: CuPy re-exports numpy's
        return _function(attr)


def _scatter_add(a: ndarray, slices, value) -> None:
    numpy.add.at(a._a, _unwrap(slices, host_arrays_ok=True), _unwrap(value))


def make(device_count: int = 1) -> tuple[FakeCupy, types.SimpleNamespace]:
    """(cupy, cupyx) stand-ins, in the shape `engine.backend._import_cupy` returns."""
    cupyx = types.SimpleNamespace(__name__="fake_cupyx", scatter_add=_scatter_add)
    return FakeCupy(device_count), cupyx
