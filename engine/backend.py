"""Devices, dtypes and the array module behind them.

This is the only module that names numpy or cupy: everything else asks for `xp`
(the array module of a device or of an array) so one code path serves CPU and GPU.
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy

# --------------------------------------------------------------------------- dtypes


class dtype:
    """A tensor element type; prints as `engine.float32` the way torch prints `torch.float32`."""

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "tensor_type")

    def __init__(self, name: str, np_dtype, is_floating_point: bool, tensor_type: str):
        self.name = name
        self.np = numpy.dtype(np_dtype)
        self.is_floating_point = is_floating_point
        self.itemsize = self.np.itemsize
        self.tensor_type = tensor_type

    def __repr__(self) -> str:
        return f"engine.{self.name}"

    def __reduce__(self):
        return self.name


float32 = dtype("float32", numpy.float32, True, "FloatTensor")
float64 = dtype("float64", numpy.float64, True, "DoubleTensor")
float16 = dtype("float16", numpy.float16, True, "HalfTensor")
int64 = dtype("int64", numpy.int64, False, "LongTensor")
int32 = dtype("int32", numpy.int32, False, "IntTensor")
uint8 = dtype("uint8", numpy.uint8, False, "ByteTensor")
bool_ = dtype("bool", numpy.bool_, False, "BoolTensor")

DTYPES = (float32, float64, float16, int64, int32, uint8, bool_)
_BY_NUMPY = {d.np: d for d in DTYPES}


def dtype_of(array) -> dtype:
    """The engine dtype of an array (numpy's platform ints map onto the nearest one)."""
    found = _BY_NUMPY.get(array.dtype)
    if found is not None:
        return found
    kind = array.dtype.kind
    if kind == "f":
        return float64
    if kind in "iu":
        return int64
    if kind == "b":
        return bool_
    raise TypeError(f"unsupported array dtype {array.dtype}")


_default_dtype = [float32]


def get_default_dtype() -> dtype:
    return _default_dtype[0]


def set_default_dtype(d: dtype) -> None:
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype[0] = d


# -------------------------------------------------------------------------- devices


class device:
    """`cpu` or `cuda[:N]`, compared and printed like torch.device."""

    __slots__ = ("type", "index")

    def __init__(self, spec, index: int | None = None):
        if isinstance(spec, device):
            self.type, self.index = spec.type, spec.index
            return
        kind, _, num = str(spec).partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {spec}")
        self.type = kind
        self.index = int(num) if num else index
        if kind == "cuda" and self.index is None:
            self.index = 0

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


CPU = device("cpu")
_default_device = [CPU]


def get_default_device() -> device:
    return _default_device[0]


def set_default_device(d) -> None:
    d = device(d) if d is not None else CPU
    if d.type == "cuda":
        cuda_module()  # fail now, clearly, rather than at the first tensor
    _default_device[0] = d


class CudaUnavailable(RuntimeError):
    """Raised when a CUDA device is asked for on a machine that cannot provide one."""


_cupy = []


def cuda_module():
    """cupy, imported on first use; a clear error when it or a GPU is missing."""
    if _cupy:
        return _cupy[0]
    try:
        import cupy
    except ImportError as exc:
        raise CudaUnavailable(
            "CuPy is not installed: install it with `pip install 'gradcli[cuda]'` "
            "(or any cupy-cudaXXx build matching your CUDA)"
        ) from exc
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # cupy raises its own CUDARuntimeError types
        raise CudaUnavailable(f"CuPy is installed but no CUDA GPU is usable: {exc}") from exc
    if count < 1:
        raise CudaUnavailable("CuPy is installed but no CUDA GPU is present")
    _cupy.append(cupy)
    return cupy


def xp_for(dev: device):
    """The array module for a device."""
    return numpy if dev.type == "cpu" else cuda_module()


def xp_of(array):
    """The array module of an array (numpy arrays and scalars included)."""
    if isinstance(array, (numpy.ndarray, numpy.generic)):
        return numpy
    return cuda_module()


def device_of(array) -> device:
    if isinstance(array, (numpy.ndarray, numpy.generic)):
        return CPU
    return device("cuda", array.device.id)


def is_array(value) -> bool:
    return isinstance(value, (numpy.ndarray, numpy.generic)) or (
        bool(_cupy) and isinstance(value, _cupy[0].ndarray)
    )


def to_device(array, dev: device):
    """Copy an array to a device (a no-op when it is already there)."""
    if device_of(array) == dev:
        return array
    if dev.type == "cpu":
        return array.get()
    cp = cuda_module()
    with cp.cuda.Device(dev.index):
        return cp.asarray(array)


def to_numpy(array):
    return array if isinstance(array, numpy.ndarray) else numpy.asarray(array)


# ------------------------------------------------------------------ random numbers

_generators: dict = {}
_seed = [None]


def manual_seed(seed: int) -> None:
    _seed[0] = int(seed)
    _generators.clear()


def generator(dev: device):
    """Per-device random generator, seeded by `manual_seed`."""
    gen = _generators.get(dev)
    if gen is None:
        xp = xp_for(dev)
        gen = xp.random.default_rng(_seed[0])
        _generators[dev] = gen
    return gen


# ----------------------------------------------------------------------- host memory


def tune_allocator() -> bool:
    """Keep freed array memory in the process instead of handing it back to the OS (glibc only).

    By default glibc returns the top of the heap to the OS whenever more than a few MB are
    free, which is exactly what happens at the end of every training step (the graph's
    activations and the old grads are freed together); the next step's arrays then
    page-fault in fresh, zeroed pages: about 1,500 faults and a third of an MLP step's
    time. Arrays below 32 MB now come from the heap and up to 64 MB of free heap is kept.
    Set ENGINE_MALLOC_TUNING=0 to leave the allocator alone. Returns whether it applied.
    """
    if os.environ.get("ENGINE_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # from glibc's <malloc.h>
    return bool(mallopt(m_mmap_threshold, 32 << 20)) and bool(mallopt(m_trim_threshold, 64 << 20))


tune_allocator()
