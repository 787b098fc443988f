"""Devices, dtypes and the array module behind them.

This is the only module that names numpy or cupy: everything else asks for `xp`
(the array module of a device or of an array) so one code path serves CPU and GPU.
Moving data between host and GPU is always explicit (`to_device`, `to_numpy`): CuPy
refuses implicit conversions, and a hidden copy would hide a slow path.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import importlib
import os
import re
import sys
import threading

import numpy

# --------------------------------------------------------------------------- dtypes


class dtype:
    """A tensor element type; prints as `engine.float32` the way torch prints `torch.float32`."""

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "tensor_type", "scalar_type", "cpp_name")

    def __init__(
        self,
        name: str,
        np_dtype,
        is_floating_point: bool,
        tensor_type: str,
        cpp_name: str,
        itemsize: int | None = None,
    ):
        self.name = name
        self.np = numpy.dtype(np_dtype)
        self.is_floating_point = is_floating_point
        self.itemsize = itemsize or self.np.itemsize  # torch's size, where the storage's differs (bfloat16)
        self.tensor_type = tensor_type
        self.scalar_type = tensor_type[: -len("Tensor")]  # as torch's messages name it: Float, Double
        self.cpp_name = cpp_name  # as torch's C++ messages name it: float, double

    @property
    def is_signed(self) -> bool:
        return self.np.kind in "if"

    def __repr__(self) -> str:
        return f"engine.{self.name}"

    def __reduce__(self):
        return self.name


# numpy has no bfloat16: its tensors are float32 arrays whose dtype carries this tag, which
# numpy's elementwise ops and reductions pass on to their results. Values are rounded to
# bfloat16 where a tensor becomes bfloat16 (creation, conversion); ops compute in float32.
BFLOAT16_TAG = "bfloat16"
BFLOAT16_STORAGE = numpy.dtype(numpy.float32, metadata={"engine_dtype": BFLOAT16_TAG})

float32 = dtype("float32", numpy.float32, True, "FloatTensor", "float")
float64 = dtype("float64", numpy.float64, True, "DoubleTensor", "double")
float16 = dtype("float16", numpy.float16, True, "HalfTensor", "c10::Half")
bfloat16 = dtype("bfloat16", BFLOAT16_STORAGE, True, "BFloat16Tensor", "c10::BFloat16", itemsize=2)
int64 = dtype("int64", numpy.int64, False, "LongTensor", "long int")
int32 = dtype("int32", numpy.int32, False, "IntTensor", "int")
int16 = dtype("int16", numpy.int16, False, "ShortTensor", "short int")
int8 = dtype("int8", numpy.int8, False, "CharTensor", "signed char")
uint8 = dtype("uint8", numpy.uint8, False, "ByteTensor", "unsigned char")
bool_ = dtype("bool", numpy.bool_, False, "BoolTensor", "bool")

DTYPES = (float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8, bool_)
_BY_NUMPY = {d.np: d for d in DTYPES if d is not bfloat16}  # bfloat16's storage dtype equals float32


def is_bfloat16(np_dtype) -> bool:
    """Whether a numpy dtype is bfloat16's storage (float32 with the tag)."""
    metadata = np_dtype.metadata
    return metadata is not None and metadata.get("engine_dtype") == BFLOAT16_TAG


def dtype_of(array) -> dtype:
    """The engine dtype of an array (numpy's platform ints map onto the nearest one)."""
    np_dtype = array.dtype
    found = _BY_NUMPY.get(np_dtype)
    if found is not None:
        if found is float32 and np_dtype.metadata is not None and is_bfloat16(np_dtype):
            return bfloat16
        return found
    kind = np_dtype.kind
    if kind == "f":
        return float64
    if kind in "iu":
        return int64
    if kind == "b":
        return bool_
    raise TypeError(f"unsupported array dtype {np_dtype}")


def round_to_bfloat16(array):
    """float32 values rounded to the nearest bfloat16 (ties to even), tagged as bfloat16's storage."""
    xp = xp_of(array)
    single = xp.array(array, dtype=numpy.float32, copy=True)
    bits = single.view(numpy.uint32)
    finite = xp.isfinite(single)
    rounded = (bits + numpy.uint32(0x7FFF) + ((bits >> numpy.uint32(16)) & numpy.uint32(1))) & numpy.uint32(
        0xFFFF0000
    )
    bits[...] = xp.where(finite, rounded, bits)
    return single.view(BFLOAT16_STORAGE)


def cast(array, dt: dtype, copy: bool = True):
    """`array` as engine dtype `dt` (not copied when it already is, unless `copy`); bfloat16
    values are rounded to it whatever the array's tag says (rounding again changes nothing)."""
    if dt is bfloat16:
        return round_to_bfloat16(array)
    if dtype_of(array) is dt:
        return array.copy() if copy else array
    return array.astype(dt.np)  # a copy, which also drops the bfloat16 tag


def bfloat16_like(array, inputs):
    """`array` tagged as bfloat16 again when every input was: what numpy's joining functions drop."""
    if array.dtype != numpy.float32 or not all(is_bfloat16(x.dtype) for x in inputs):
        return array
    return array.view(BFLOAT16_STORAGE)


def as_result_array(value, like, keep_bfloat16: bool = True):
    """An op's result as an array (a 0-d one for a scalar), bfloat16 again when the op's first input
    was: numpy's scalars (reductions, ops on 0-d arrays) and CuPy's 0-d results drop the tag.
    `keep_bfloat16=False` for a cast, whose result has the dtype it was asked for."""
    if _device_module(value) is None:
        array = numpy.asarray(value)
    elif value.ndim == 0 and keep_bfloat16:
        array = value
    else:
        return value
    dtype_of_like = getattr(like, "dtype", None)
    if dtype_of_like is not None and array.dtype == numpy.float32 and is_bfloat16(dtype_of_like):
        return array.view(BFLOAT16_STORAGE)
    return array


_default_dtype = [float32]


def get_default_dtype() -> dtype:
    return _default_dtype[0]


def set_default_dtype(d: dtype) -> None:
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype[0] = d


# -------------------------------------------------------------------------- devices


_TORCH_DEVICE_TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, "
    "mtia, privateuseone"
)
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?")


class device:
    """`cpu` or `cuda[:N]`, made, compared and printed like torch.device.

    As in torch, `device("cuda")` has no index (it means the current GPU; `placement` picks it when
    data is put there), so it is not equal to `device("cuda:0")`; and a device never equals a string.
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # torch's keyword names: device(type=..., index=...)
        if isinstance(type, device):
            if index is not None:
                raise _device_arguments_error(type, index)
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool) and index is None:
            if not _cuda_usable():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = "cuda", type
        if not isinstance(type, str):
            raise _device_arguments_error(type, index)
        match = _DEVICE_STRING.fullmatch(type)
        if match is None:
            raise RuntimeError(f"Invalid device string: '{type}'")
        kind, num = match.groups()
        if kind not in ("cpu", "cuda"):
            if f" {kind}," in f" {_TORCH_DEVICE_TYPES},":
                raise RuntimeError(f"engine supports the cpu and cuda device types only, not {kind}: {type}")
            raise RuntimeError(
                f"Expected one of {_TORCH_DEVICE_TYPES} device type at start of device string: {kind}"
            )
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(
                    f"device(): argument 'index' (position 2) must be int, not {index.__class__.__name__}"
                )
            if num is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed explicitly: {type}"
                )
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        self.type = kind
        self.index = int(num) if num is not None else index

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented  # torch.device("cpu") == "cpu" is False
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))


def _device_arguments_error(spec, index) -> TypeError:
    """torch's argument-parser error for a device() call that matches neither of its signatures."""
    if index is not None:
        got = "engine.device" if isinstance(spec, device) else spec.__class__.__name__
        return TypeError(f"device(): argument 'type' (position 1) must be str, not {got}")
    got = spec.__class__.__name__
    return TypeError(
        f"device() received an invalid combination of arguments - got ({got}), but expected one of:\n"
        " * (engine.device device)\n"
        f"      didn't match because some of the arguments have invalid types: (!{got}!)\n"
        " * (str type, int index = -1)\n"
    )


def _cuda_usable() -> bool:
    try:
        cuda_module()
    except CudaUnavailable:
        return False
    return True


def placement(spec) -> device:
    """The device data goes to for `spec`: "cuda" without an index is the current GPU, as in torch."""
    dev = spec if isinstance(spec, device) else device(spec)
    if dev.type == "cpu":
        return CPU
    if dev.index is None:
        return device("cuda", cuda_module().cuda.Device().id)
    return dev


CPU = device("cpu")


class _DefaultDevice(threading.local):
    """The default device, per thread as torch keeps it: a new thread starts on the CPU."""

    device = CPU


_default_device = _DefaultDevice()


def get_default_device() -> device:
    return _default_device.device


def set_default_device(d) -> None:
    d = placement(d) if d is not None else CPU
    if d.type == "cuda":
        # Fail now, clearly, rather than at the first tensor; and make it CuPy's current device,
        # where CuPy allocates and runs kernels.
        cuda_module().cuda.Device(d.index).use()
    _default_device.device = d


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


def data_ptr(array) -> int:
    """The address of an array's first element, in host or GPU memory."""
    if isinstance(array, numpy.ndarray):
        return array.__array_interface__["data"][0]
    return array.data.ptr  # a CuPy array's MemoryPointer


def storage_of(array):
    """The array that owns the memory `array` looks at (itself when it owns it)."""
    if isinstance(array, numpy.ndarray):
        while True:
            base = array.base
            if not isinstance(base, numpy.ndarray):  # as_strided's views hold theirs one step further
                base = getattr(base, "base", None)
            if not isinstance(base, numpy.ndarray):
                return array
            array = base
    return array  # CuPy: addressed through its MemoryPointer instead (see storage_bounds)


def same_storage(a, b) -> bool:
    """Whether two arrays look at the same storage: one owning numpy array, or one CuPy allocation."""
    if isinstance(a, numpy.ndarray) or isinstance(b, numpy.ndarray):
        return (
            isinstance(a, numpy.ndarray) and isinstance(b, numpy.ndarray) and storage_of(a) is storage_of(b)
        )
    return a.data.mem.ptr == b.data.mem.ptr


def owns_memory(array) -> bool:
    """Whether `array` is known to own its memory, so that it shares none with another that does.
    A numpy array without a base does; a CuPy array is never taken to, since the views CuPy makes
    on a MemoryPointer (restrided's) have no base either."""
    return array.__class__ is numpy.ndarray and array.base is None


def storage_bounds(array) -> tuple[int, int]:
    """(offset of the first element from the storage's start, the storage's size), in bytes."""
    if isinstance(array, numpy.ndarray):
        root = storage_of(array)
        return data_ptr(array) - data_ptr(root), root.nbytes
    # CuPy: the allocation behind the MemoryPointer. Its size is the one asked for with CuPy's raw
    # allocator; its default memory pool rounds allocations up to a multiple of 512 bytes, and a
    # storage on a GPU then has that size (torch's bounds checks let a few elements more through).
    memory = array.data.mem
    return array.data.ptr - memory.ptr, memory.size


def storage_offset(array) -> int:
    """Where the first element sits in the storage, in elements (torch's storage_offset())."""
    return storage_bounds(array)[0] // array.itemsize


def contiguous_strides(shape: tuple) -> tuple:
    """torch's strides of a contiguous tensor of this shape, in elements (a size 0 counts as 1)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def element_strides(array) -> tuple:
    """torch's strides of the tensor over `array`, in elements: numpy gives an array it made empty
    zero strides, where torch gives it contiguous ones."""
    if array.size == 0 and not any(array.strides):
        return contiguous_strides(array.shape)
    return tuple(s // array.itemsize for s in array.strides)


def restrided(array, shape: tuple, strides: tuple, offset: int):
    """A view of `array`'s storage with this shape, strides and offset (in elements, from the
    storage's start), as torch's as_strided / set_ address it. The caller checks the bounds."""
    itemsize = array.itemsize
    start = (offset - storage_offset(array)) * itemsize  # from `array`'s first element
    byte_strides = tuple(s * itemsize for s in strides)
    if isinstance(array, numpy.ndarray):
        root = storage_of(array)
        if not (root.flags.c_contiguous or root.flags.f_contiguous):
            raise NotImplementedError("the engine cannot address the storage of this array")
        return numpy.ndarray(
            shape,
            dtype=array.dtype,
            buffer=root,
            offset=data_ptr(array) - data_ptr(root) + start,
            strides=byte_strides,
        )
    cp = cuda_module()
    return cp.ndarray(shape, dtype=array.dtype, memptr=array.data + start, strides=byte_strides)


def element_positions(array) -> numpy.ndarray:
    """Where each element of `array` (in C order) sits in its storage, in elements (on the host)."""
    itemsize = array.itemsize
    positions = numpy.full((), storage_offset(array), dtype=numpy.int64)
    for axis, (size, stride) in enumerate(zip(array.shape, array.strides)):
        shape = [1] * array.ndim
        shape[axis] = size
        positions = positions + numpy.arange(size, dtype=numpy.int64).reshape(shape) * (stride // itemsize)
    return numpy.broadcast_to(positions, array.shape).reshape(-1)


def memory_overlap(a, b) -> str:
    """How two arrays share memory, by ATen's rule (get_overlap_status): "full" for the same
    elements in the same layout, "partial" when their spans intersect otherwise, "no", or
    "too hard" when either is not dense (strided with gaps, expanded), which ATen lets pass."""
    if a is b:
        return "full"
    if (owns_memory(a) and owns_memory(b)) or a.size == 0 or b.size == 0:
        return "no"  # two arrays that own their memory: the common case, decided at once
    if not xp_of(a).may_share_memory(a, b):  # bounds only: quick
        return "no"
    if not is_dense(a) or not is_dense(b):
        return "too hard"
    a_begin, b_begin = data_ptr(a), data_ptr(b)
    a_end, b_end = a_begin + a.size * a.itemsize, b_begin + b.size * b.itemsize
    if a_begin == b_begin and a_end == b_end:
        return "full" if _same_layout(a, b) else "partial"
    return "partial" if a_begin < b_end and b_begin < a_end else "no"


def is_dense(array) -> bool:
    """c10's is_non_overlapping_and_dense: some order of the dimensions makes it contiguous."""
    itemsize = array.itemsize
    dims = sorted((stride, size) for stride, size in zip(array.strides, array.shape) if size > 1)
    expected = itemsize
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return True


def _same_layout(a, b) -> bool:
    """Equal shapes and strides (a dimension of size 1 has no stride worth comparing)."""
    return a.shape == b.shape and all(sa == sb for sa, sb, n in zip(a.strides, b.strides, a.shape) if n > 1)


def is_array(value) -> bool:
    return isinstance(value, (numpy.ndarray, numpy.generic)) or _device_module(value) is not None


def device_scope(dev: device):
    """A context making `dev` CuPy's current device, where new arrays are allocated (a no-op for the CPU)."""
    if dev.type == "cpu":
        return contextlib.nullcontext()
    return cuda_module().cuda.Device(dev.index)


def to_device(array, dev: device):
    """Copy an array to a device (a no-op when it is already there); transfers are always explicit."""
    dev = placement(dev)
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


def storage_and_offset(array) -> tuple:
    """(the array owning `array`'s memory, `array`'s offset in it in elements): torch's storage and
    storage_offset. An owner that is not laid out contiguously is not a storage: `array` is its own."""
    root = array
    while root.base is not None and root.base.__class__ is array.__class__:
        root = root.base
    if root is array or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return array, 0
    return root, (data_ptr(array) - data_ptr(root)) // array.itemsize


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

#: torch.manual_seed takes any int64 or uint64 seed; numpy's generators only non-negative ones.
SEED_MIN, SEED_MAX = -(2**63), 2**64 - 1


def seed_value(seed: int) -> int:
    """A seed as torch reads it: a negative int64 is taken as its uint64 bit pattern (-1 is 2**64 - 1)."""
    seed = int(seed)
    if not SEED_MIN <= seed <= SEED_MAX:
        raise ValueError("Overflow when unpacking long long")  # torch 2.13's words
    return seed % 2**64


_device_seeds: dict = {}  # seeds given to one device since the last manual_seed (engine.cuda.manual_seed)


def manual_seed(seed: int) -> None:
    _seed[0] = seed_value(seed)
    _device_seeds.clear()
    _generators.clear()


def seed_device(dev: device, seed: int) -> None:
    """Reseed one device's generator only (the others keep their state)."""
    _device_seeds[dev] = seed_value(seed)
    _generators.pop(dev, None)


class _Draws(threading.local):
    """How this thread's random draws are made and watched (per thread, as functorch's vmap is).

    `batch`: while engine.func.vmap runs with randomness="different", `(batch shape, as_batched)`:
    every draw gets the batch shape in front of its own (one independent draw per example) and
    `as_batched(tensor)` makes the drawn tensor the function's batched one; None otherwise.
    `watchers`: called with the device each time a random generator is handed out: how a check
    learns that a forward draws random numbers (gradcheck's determinism probe, vmap's "error"
    randomness); empty, it costs one truth test.
    """

    def __init__(self) -> None:
        self.batch = None
        self.watchers: list = []

    def snapshot(self) -> tuple:
        return self.batch, self.watchers[:]

    def adopt(self, snapshot: tuple) -> None:
        self.batch, self.watchers = snapshot[0], snapshot[1][:]


draws = _Draws()


def drawn_shape(shape: tuple) -> tuple:
    """The shape a random draw of `shape` takes: with the batch in front inside vmap's "different"."""
    batch = draws.batch
    return shape if batch is None else (*batch[0], *shape)


def drawn(tensor):
    """A tensor of draws made in `drawn_shape`: batched inside vmap's "different"."""
    batch = draws.batch
    return tensor if batch is None else batch[1](tensor)


def generator(dev: device):
    """Per-device random generator, seeded by `manual_seed` (or `seed_device`)."""
    watchers = draws.watchers
    if watchers:
        for watch in watchers:
            watch(dev)
    gen = _generators.get(dev)
    if gen is None:
        with device_scope(dev):  # CuPy keeps a generator's state on the device it was made on
            gen = xp_for(dev).random.default_rng(_device_seeds.get(dev, _seed[0]))
        _generators[dev] = gen
    return gen


def rng_snapshot() -> tuple:
    """Every generator's state, to replay the same draws later (`rng_restore`). The CPU's generator
    is made first: never seeded, it would draw from fresh entropy each time it is made."""
    if CPU not in _generators:
        _generators[CPU] = numpy.random.default_rng(_device_seeds.get(CPU, _seed[0]))
    return _seed[0], dict(_device_seeds), {dev: copy.deepcopy(gen) for dev, gen in _generators.items()}


def rng_restore(snapshot: tuple) -> None:
    """Put the generators back as `rng_snapshot` found them; the snapshot stays reusable."""
    seed, device_seeds, generators = snapshot
    _seed[0] = seed
    _device_seeds.clear()
    _device_seeds.update(device_seeds)
    _generators.clear()
    _generators.update({dev: copy.deepcopy(gen) for dev, gen in generators.items()})


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


# ------------------------------------------------------------------ numpy's error state

_quiet = threading.local()


def quiet_numpy() -> None:
    """PyTorch never warns on division by zero or log(0); numpy would. Its error state is per
    thread (a context variable), so each thread running engine ops ignores errors from its first op."""
    if not _quiet.__dict__:
        numpy.seterr(all="ignore")
        _quiet.done = True
