"""Tensor: an array plus the autograd state PyTorch keeps beside it.

The state is deliberately small (`__slots__`) because a Tensor is made per op:
the array, whether it requires grad, its grad and grad_fn, which output of grad_fn it
is, a version counter shared with its views, and for a view its base and how to
re-derive it from the base.
"""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict

import numpy

from . import backend
from .autograd import anomaly, forward_grad
from .autograd.hooks import add_hook
from .autograd.thread_local import this_thread
from .printing import tensor_repr

ndarray = numpy.ndarray

NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)
NON_LEAF_DETACH_HINT = (
    " If you want to use a computed variable in a subgraph that doesn't require "
    "differentiation use var_no_grad = var.detach()."
)


class Size(tuple):
    """A shape; prints as `engine.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"engine.Size([{', '.join(str(n) for n in self)}])"

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n


class VersionCounter:
    """What every tensor of one storage shares: its version, and what anomaly mode and views add.

    `version` goes up with each in-place change; a saved tensor compares it with the version
    it was saved at. `bumps`: where each change happened, `[(version, user frame)]`, kept in
    anomaly mode (autograd/anomaly.py). `views`: the views of the storage, `{id(view): weak
    reference}`, made by the first view (ops/views.py).
    """

    __slots__ = ("version", "bumps", "views")

    def __init__(self):
        self.version = 0
        self.bumps = None
        self.views = None


DETACHED_SAVED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead"
)


class DetachedVersion(int):
    """A storage's version after `detach_()` of a non-leaf: the number, plus who was detached.

    A node checks its saved inputs in one comparison (`value._vc.version == saved`, the
    hot path in FormulaNode.apply); this value compares unequal there, so the node falls
    through to its full unpack, which raises PyTorch's error for a detached saved input
    (`detached_since_saved`) and accepts the others. `!=`, arithmetic and printing are an
    int's, and a bump keeps the mark.
    """

    def __new__(cls, value: int, detached: weakref.WeakValueDictionary):
        version = super().__new__(cls, value)
        version.detached = detached
        return version

    def __eq__(self, other) -> bool:
        return False

    def __ne__(self, other) -> bool:
        return int(self) != other

    __hash__ = int.__hash__

    def __add__(self, other):
        return DetachedVersion(int(self) + other, self.detached)


def detached_since_saved(value, saved_version) -> bool:
    """Whether a saved input was a non-leaf detached in place after it was saved (PyTorch refuses it)."""
    version = value._vc.version
    return (
        version.__class__ is DetachedVersion
        and saved_version.__class__ is not DetachedVersion
        and value.grad_fn is None
        and version.detached.get(id(value)) is value
    )


class _Cleared(OrderedDict):
    """`_backward_hooks = None` on a non-leaf: its hooks still run (they live on grad_fn), as in torch."""


CLEARED_HOOKS = _Cleared()


def _grad_fn_not_writable(tensor, value=None) -> None:
    raise AttributeError("attribute 'grad_fn' of 'engine.Tensor' objects is not writable")


class Tensor:
    """The state of a tensor and the methods that need nothing but it.

    Operators, the functional API as methods, `backward` and the constructor are installed
    by ops/tensor_methods.py, above the ops they call.
    """

    __slots__ = (
        "_data",
        "_rg",
        "_grad",
        "_node",
        "_output_nr",
        "_vc",
        "_base",
        "_view_fn",
        "_retains_grad",
        "_hooks",
        "_post_acc_hooks",
        "_acc",
        "__weakref__",
    )
    __array_priority__ = 1000  # numpy defers `array * tensor` to Tensor.__rmul__

    # -- autograd state -------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag.__class__ is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if self.grad_fn is not None:
            message = "you can only change requires_grad flags of leaf variables."
            if not flag:
                message += NON_LEAF_DETACH_HINT
            raise RuntimeError(message)
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._rg = flag

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")  # torch's setter, given no value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad.__class__ is not bool:
            raise TypeError(
                "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                f"{tp_name(requires_grad)}"
            )
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables." + NON_LEAF_DETACH_HINT
                )
            return self
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._rg = bool(requires_grad)
        return self

    grad_fn = property(
        lambda self: self._node,
        _grad_fn_not_writable,
        _grad_fn_not_writable,
        "The node that made this tensor; read-only, as torch's.",
    )

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def _grad_fn(self):
        """torch's other name for grad_fn; setting it to None detaches the tensor in place."""
        return self.grad_fn

    @_grad_fn.setter
    def _grad_fn(self, value) -> None:
        if value is not None:
            raise RuntimeError("_grad_fn can be only set to None")
        self.detach_()

    @_grad_fn.deleter
    def _grad_fn(self) -> None:
        raise RuntimeError("Deletion of _grad_fn not allowed. Detach tensor instead!")

    @property
    def grad(self):
        if anomaly.state[0] and anomaly.observer is not None:
            anomaly.observer.grad_read(self)
        if self._node is not None and not self._retains_grad:
            warnings.warn(NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if (
                value._data.dtype != self._data.dtype
            ):  # torch names the grad's C++ type, the tensor's ScalarType
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype.cpp_name}' to a tensor with "
                    f"grad_dtype '{self.dtype.scalar_type}'. The gradient must match the tensor's grad_dtype "
                    "(defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a "
                    "specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the "
                    "dtypes of a tensor and its gradient may break downstream systems that assume they match."
                )
            if value._data.__class__ is not self._data.__class__ or value._data.__class__ is not ndarray:
                mine, theirs = self.device, value.device
                if mine.type != theirs.type:
                    raise RuntimeError(
                        f"attempting to assign a gradient with device type '{theirs.type}' to a tensor with "
                        f"device type '{mine.type}'. Please ensure that the gradient and the tensor are on the "
                        "same device"
                    )
                if mine.index != theirs.index:
                    raise RuntimeError(
                        f"attempting to assign a gradient located on device with index '{theirs.index}' to a "
                        f"tensor located on device with index '{mine.index}'. Please ensure that the gradient "
                        "and the tensor are on the same device"
                    )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                    "the same size"
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn._retain(self)

    def register_hook(self, hook):
        """hook(grad) -> None or a replacement grad; runs each time a gradient reaches this tensor."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None and (self._hooks is None or self._hooks is CLEARED_HOOKS):
            return self.grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = OrderedDict()
        return add_hook(self._hooks, hook)  # a non-leaf's assigned table: kept, never run (torch)

    @property
    def _backward_hooks(self):
        """The table register_hook fills ({handle id: hook}), or None before the first hook.

        Assigning replaces a leaf's hooks (None removes them). On a non-leaf, as in torch, the
        hooks registered so far stay on grad_fn and keep running; an assigned table is only
        kept (and filled by later register_hook calls, whose hooks then never run).
        """
        hooks = self._hooks
        if hooks is CLEARED_HOOKS:
            return None
        if hooks is not None or self.grad_fn is None:
            return hooks
        table = self.grad_fn._hooks
        return None if table is None else table.tensor.get(self._output_nr)

    @_backward_hooks.setter
    def _backward_hooks(self, hooks) -> None:
        if hooks is None and self.grad_fn is not None:
            hooks = CLEARED_HOOKS
        self._hooks = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        raise RuntimeError("Deletion of _backwards_hooks not allowed!")

    def register_post_accumulate_grad_hook(self, hook):
        """hook(leaf) -> None; runs in backward once the gradient has been added into the leaf's .grad."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = {}
        return add_hook(self._post_acc_hooks, hook)

    @property
    def _version(self) -> int:
        return int(self._vc.version)

    @property
    def output_nr(self) -> int:
        return self._output_nr

    def _is_view(self) -> bool:
        return self._base is not None

    def detach(self) -> Tensor:
        """A new leaf sharing storage and the version counter, outside the graph."""
        out = view_tensor(self._data, self)
        return out

    def detach_(self) -> Tensor:
        if self._base is not None and self._base._rg:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        if self.grad_fn is not None:
            _mark_detached(self)
        self._node = None
        self._rg = False
        self._output_nr = 0
        return self

    @property
    def data(self) -> Tensor:
        """The same storage with no history and its own version counter (torch's `.data`)."""
        out = wrap(self._data)
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        """Another tensor's storage, shape and dtype; the version counter and history stay (torch)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._rg and not value.dtype.is_floating_point:
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex dtype"
            )
        self._data = value._data

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    def storage_offset(self) -> int:
        """Where the first element sits in the storage, in elements."""
        return backend.storage_offset(self._data)

    def data_ptr(self) -> int:
        """The address of the first element (0 for an empty tensor, as in torch)."""
        return backend.data_ptr(self._data) if self._data.size else 0

    # -- metadata -------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[dim]

    @property
    def dtype(self):
        return backend.dtype_of(self._data)

    @property
    def device(self):
        return backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize  # torch's size: bfloat16's is 2, though stored in float32

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def stride(self, dim: int | None = None):
        strides = backend.element_strides(self._data)
        return strides if dim is None else strides[dim]

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self) -> int:
        return id(self)

    # -- conversion -----------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._values().reshape(()).item()

    def tolist(self):
        return self._values().tolist()

    def _values(self):
        """The array as users read the values: bfloat16's float32 storage rounded to bfloat16."""
        data = self._data
        if data.dtype.metadata is not None and backend.is_bfloat16(data.dtype):
            return backend.round_to_bfloat16(data)
        return data

    def numpy(self, *, force: bool = False):
        """The array itself on the CPU; a GPU tensor needs `.cpu()` first (or force=True), as in torch."""
        on_host = self._data.__class__ is ndarray
        if not force:
            if not on_host:  # torch checks the device first
                raise TypeError(_device_numpy_message(self))
            if self._rg and this_thread.grad_enabled:  # torch allows it under no_grad
                raise RuntimeError(
                    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
                )
        _check_numpy_dtype(self)
        return self._data if on_host else backend.to_numpy(self._data)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __array__(self, dtype=None, copy=None):
        if self._data.__class__ is not ndarray and self.device.type != "cpu":
            raise TypeError(_device_numpy_message(self))  # torch's __array__ is numpy(): no hidden copy
        _check_numpy_dtype(self)
        array = backend.to_numpy(self._data)
        return array if dtype is None else array.astype(dtype)

    def __repr__(self) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (backend.to_numpy(self._data), self._rg, str(self.device)))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment.  If you were attempting to deepcopy a module, "
                "this may be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        out = type(self).__new__(type(self))
        init_state(out, self._data.copy())
        out._rg = self._rg
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out


def raw_grad_fn(t: Tensor):
    """`t.grad_fn` without InvalidView's refusal: for the engine's own bookkeeping of such views."""
    return t._node


class InvalidView(Tensor):
    """A view whose creation (no_grad mode, a custom Function, a node of several outputs) forbids
    the in-place change its storage has had: as torch's regeneration of the view's grad_fn does,
    reading `grad_fn` (so `is_leaf`, and any op recording it in grad mode) raises the view's error,
    which its grad_fn, an `Invalid` node (ops/inplace.py), makes."""

    __slots__ = ()

    @property
    def grad_fn(self):
        fn = self._node
        if fn is not None and fn.refuses_view:
            err = fn.view_error()
            err.tensor = self  # for gradcli anomaly: which view
            raise anomaly.noted(err)
        return fn

    grad_fn = grad_fn.setter(_grad_fn_not_writable).deleter(_grad_fn_not_writable)


def _mark_detached(t: Tensor) -> None:
    """Remember on the storage's version that `t`, a non-leaf, was detached in place."""
    vc = t._vc
    version = vc.version
    detached = version.detached if version.__class__ is DetachedVersion else weakref.WeakValueDictionary()
    detached[id(t)] = t  # {id: tensor}, weakly: tensors compare elementwise, so no WeakSet
    vc.version = DetachedVersion(version, detached)


def _check_numpy_dtype(t: Tensor) -> None:
    """numpy has no bfloat16: torch refuses to convert one (the engine's float32 storage is no excuse)."""
    if t.dtype is backend.bfloat16:
        raise TypeError("Got unsupported ScalarType BFloat16")


def _device_numpy_message(t: Tensor) -> str:
    return (
        f"can't convert {t.device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
        "host memory first."
    )


def _rebuild(array, requires_grad, device="cpu"):
    """Unpickling: the host copy back on the device it was pickled from."""
    out = wrap(backend.to_device(array.copy(), backend.device(device)))
    out._rg = requires_grad
    return out


def init_state(t: Tensor, array) -> None:
    t._data = array
    t._rg = False
    t._grad = None
    t._node = None
    t._output_nr = 0
    t._vc = VersionCounter()
    t._base = None
    t._view_fn = None
    t._retains_grad = False
    t._hooks = None
    t._post_acc_hooks = None
    t._acc = None


def wrap(array) -> Tensor:
    """A fresh Tensor (no grad) around an array; numpy scalars become 0-d arrays."""
    if array.__class__ is not ndarray and (isinstance(array, numpy.generic) or not backend.is_array(array)):
        array = numpy.asarray(array)
    t = Tensor.__new__(Tensor)
    init_state(t, array)
    return t


def view_tensor(array, base: Tensor) -> Tensor:
    """A tensor sharing `base`'s storage and version counter (detach, views)."""
    t = wrap(array)
    t._vc = base._vc
    return t


class SavedOutput:
    """An op's own output, saved for its backward without a reference back to the node.

    Saving the output Tensor would close a cycle (tensor -> grad_fn -> saved tensor) that
    only the cyclic GC frees. As PyTorch's SavedVariable does, keep the array and the
    version counter, and rebuild a Tensor whose grad_fn is the node when one is asked for.
    """

    __slots__ = ("_data", "_vc", "_output_nr", "_place", "_tangent")

    def __init__(self, tensor, output_nr: int = 0, place=None):
        self._data = tensor._data
        self._vc = tensor._vc
        self._output_nr = output_nr
        self._place = place

    def keep_tangent(self, output, tangent, level: int) -> None:
        """Keep the output's forward-AD tangent at `level` (autograd/forward_grad.py), when this is it."""
        if output._data is self._data:
            self._tangent = (level, tangent)

    def producer(self, node) -> tuple:
        """(node, output_nr) that torch's modified-saved-tensor error names: the view's grad_fn while
        the view lives, else the node (torch's SavedVariable falls back to the node it is saved for)."""
        place = self._place
        live = None if place is None else place.live()
        return (node, self._output_nr) if live is None else (live, 0)

    def tensor(self, node) -> Tensor:
        """The output as a Tensor again: same array and version counter, `grad_fn` the node.

        The output of an in-place op on a view is the view, whose grad_fn (AsStridedBackward0 on
        the base's CopySlices) is not the node: `place()` gives it (or None), without keeping
        it alive, as PyTorch's SavedVariable keeps it weakly.
        """
        t = wrap(self._data)
        t._vc = self._vc
        place = self._place
        view_fn = None if place is None else place()
        t._node = node if view_fn is None else view_fn
        t._output_nr = self._output_nr if view_fn is None else 0
        t._rg = True
        tangent = forward_grad.kept_tangent(getattr(self, "_tangent", None))
        if tangent is not None:
            forward_grad.set_tangent(t, tangent)
        return t


def tp_name(value) -> str:
    """A value's type as CPython's tp_name gives it (torch's messages): `numpy.ndarray`, `float`, `Foo`."""
    cls = type(value)
    if cls.__flags__ & _HEAP_TYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class written in Python, whose tp_name is its bare name


def typename(value) -> str:
    """torch.typename: `engine.FloatTensor` (`engine.cuda.` on a GPU) for a tensor, else the qualified class."""
    if isinstance(value, Tensor):
        return backend.tensor_type_name(value._data)
    module, name = type(value).__module__, type(value).__qualname__
    return name if module in ("builtins", "__builtin__", None) else f"{module}.{name}"
