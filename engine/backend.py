"""Devices, dtypes and the array module behind them.

This is the only module that names numpy or cupy: everything else asks for `xp`
(the array module of a device or of an array) so one code path serves CPU and GPU.
Moving data between host and GPU is always explicit (`to_device`, `to_numpy`): CuPy
refuses implicit conversions, and a hidden copy would hide a slow path.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import sys

import numpy

# --------------------------------------------------------------------------- dtypes


class dtype:
    """A tensor element type; prints as `engine.float32` the way torch prints `torch.float32`."""

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "tensor_type", "scalar_type", "cpp_name")

    def __init__(self, name: str, np_dtype, is_floating_point: bool, tensor_type: str, cpp_name: str):
        self.name = name
        self.np = numpy.dtype(np_dtype)
        self.is_floating_point = is_floating_point
        self.itemsize = self.np.itemsize
        self.tensor_type = tensor_type
        self.scalar_type = tensor_type[: -len("Tensor")]  # as torch's messages name it: Float, Double
        self.cpp_name = cpp_name  # as torch's C++ messages name it: float, double

    def __repr__(self) -> str:
        return f"engine.{self.name}"

    def __reduce__(self):
        return self.name


float32 = dtype("float32", numpy.float32, True, "FloatTensor", "float")
float64 = dtype("float64", numpy.float64, True, "DoubleTensor", "double")
float16 = dtype("float16", numpy.float16, True, "HalfTensor", "c10::Half")
int64 = dtype("int64", numpy.int64, False, "LongTensor", "long int")
int32 = dtype("int32", numpy.int32, False, "IntTensor", "int")
uint8 = dtype("uint8", numpy.uint8, False, "ByteTensor", "unsigned char")
bool_ = dtype("bool", numpy.bool_, False, "BoolTensor", "bool")

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
        # Fail now, clearly, rather than at the first tensor; and make it CuPy's current device,
        # where CuPy allocates and runs kernels.
        cuda_module().cuda.Device(d.index).use()
    _default_device[0] = d


class CudaUnavailable(RuntimeError):
    """Raised when a CUDA device is asked for on a machine that cannot provide one."""


INSTALL_HINT = "install it with `pip install 'gradcli[cuda]'` (or any cupy-cudaXXx build matching your CUDA)"

# [cupy, cupyx] once imported and a GPU was found. Tests may fill it (or replace `_import_cupy`)
# with a numpy-backed stand-in to exercise the device paths without a GPU.
_cupy: list = []


def _import_cupy() -> tuple:
    """The CuPy modules the engine uses: cupy itself and cupyx (scatter_add, scipy.special).

    Imported on first use: CuPy is optional, and slow to import where it is installed.
    """
    import cupy
    import cupyx

    return cupy, cupyx


def cuda_module():
    """cupy, imported on first use; a one-line CudaUnavailable saying what is missing and what to do."""
    if _cupy:
        return _cupy[0]
    try:
        cupy, cupyx = _import_cupy()
    except ImportError as exc:
        raise CudaUnavailable(f"CuPy is not installed: {INSTALL_HINT}") from exc
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # cupy raises its own CUDARuntimeError types
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CudaUnavailable(
            f"CuPy is installed but no CUDA GPU is usable ({reason}): a machine with an NVIDIA GPU and "
            "driver is needed"
        ) from exc
    if count < 1:
        raise CudaUnavailable(
            "CuPy is installed but no CUDA GPU is present: a machine with an NVIDIA GPU and driver is needed"
        )
    _cupy[:] = [cupy, cupyx]
    return cupy


def _device_module(value):
    """cupy when `value` is a cupy array, else None; never imports cupy just to ask."""
    cp = _cupy[0] if _cupy else sys.modules.get("cupy")
    if cp is None or not isinstance(value, cp.ndarray):
        return None
    return cp if _cupy else cuda_module()


def xp_for(dev: device):
    """The array module for a device."""
    return numpy if dev.type == "cpu" else cuda_module()


def xp_of(array):
    """The array module of an array: cupy for a cupy array, numpy for anything else (scalars included)."""
    if array.__class__ is numpy.ndarray:
        return numpy
    return _device_module(array) or numpy


def device_of(array) -> device:
    if array.__class__ is numpy.ndarray or _device_module(array) is None:
        return CPU
    return device("cuda", array.device.id)


def tensor_type_name(array) -> str:
    """How torch's messages name the type of a tensor holding `array`: `engine.cuda.FloatTensor`."""
    on_gpu = array.__class__ is not numpy.ndarray and device_of(array).type == "cuda"
    return ("engine.cuda." if on_gpu else "engine.") + dtype_of(array).tensor_type


def is_array(value) -> bool:
    return isinstance(value, (numpy.ndarray, numpy.generic)) or _device_module(value) is not None


def device_scope(dev: device):
    """A context making `dev` CuPy's current device, where new arrays are allocated (a no-op for the CPU)."""
    if dev.type == "cpu":
        return contextlib.nullcontext()
    return cuda_module().cuda.Device(dev.index)


def to_device(array, dev: device):
    """Copy an array to a device (a no-op when it is already there); transfers are always explicit."""
    if device_of(array) == dev:
        return array
    if dev.type == "cpu":
        return array.get()
    cp = cuda_module()
    with cp.cuda.Device(dev.index):
        # asarray would hand back a cupy array of another GPU unchanged; copy() lands on the current one
        return array.copy() if isinstance(array, cp.ndarray) else cp.asarray(array)


def to_numpy(array):
    """A numpy array of an array's values, copied from the GPU when it lives there."""
    if isinstance(array, (numpy.ndarray, numpy.generic)):
        return numpy.asarray(array)
    return array.get() if _device_module(array) is not None else numpy.asarray(array)


def scatter_add(out, key, values) -> None:
    """out[key] += values, with repeated indices adding up (numpy.add.at / cupyx.scatter_add)."""
    if out.__class__ is numpy.ndarray:
        numpy.add.at(out, key, values)
    else:
        cuda_module()
        _cupy[1].scatter_add(out, key, values)


def device_special(xp, name: str):
    """CuPy's kernel `name` (erf, erfc, erfinv) for arrays of `xp`, or None (numpy, or no cupyx.scipy):
    then the engine's array-op version is used."""
    if xp is numpy or not _cupy or xp is not _cupy[0]:
        return None
    try:
        special = importlib.import_module(_cupy[1].__name__ + ".scipy.special")
    except ImportError:
        return None
    return getattr(special, name, None)


def synchronize(dev: device) -> None:
    """Wait for the work queued on `dev` (GPU calls return before the kernels finish; timings need this)."""
    if dev.type != "cpu":
        cuda_module().cuda.Device(dev.index).synchronize()


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
        with device_scope(dev):  # CuPy keeps a generator's state on the device it was made on
            gen = xp_for(dev).random.default_rng(_seed[0])
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
