"""The Tensor API and namespaces around the ops: keyword names, Tensor.type, dtype aliases, new_*,
engine.device, engine.cuda, randint / linspace arguments, is_tensor, numel, finfo / iinfo.

Where torch is installed every expectation is checked against it too (`lib` runs a test on both).
"""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest
from opcheck import check_error

import engine
from engine import backend
from engine.ops import api, tensor_methods

try:
    import torch
except ImportError:
    torch = None

X = np.arange(6.0).reshape(2, 3) / 7 + 0.1


def _same(e, t) -> None:
    """An engine result equals torch's: values, dtype, shape, grad_fn name (or equal Python values)."""
    if isinstance(t, tuple):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b)
        return
    if isinstance(t, str):
        assert e == t.replace("torch", "engine")
        return
    if not hasattr(t, "dtype"):
        assert e == t
        return
    assert str(e.dtype).replace("engine.", "") == str(t.dtype).replace("torch.", "")
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy())
    assert (e.grad_fn is None) == (t.grad_fn is None)
    if e.grad_fn is not None:
        assert e.grad_fn.name() == t.grad_fn.name()


def _both(fn, device=None):
    """fn(lib, x) on the engine (x on `device`, else the default one), and on torch; the results compared."""
    ours = fn(engine, engine.tensor(X, requires_grad=True, device=device))
    if torch is not None:
        _same(ours, fn(torch, torch.tensor(X, requires_grad=True)))
    return ours


# ------------------------------------------------------------------------ keyword arguments

KEYWORD_CALLS = {
    "exp": lambda lib, x: lib.exp(input=x),
    "sin": lambda lib, x: lib.sin(input=x),
    "abs": lambda lib, x: lib.abs(input=x),
    "add": lambda lib, x: lib.add(input=x, other=x, alpha=2),
    "sub": lambda lib, x: lib.sub(input=x, other=2.0),
    "mul": lambda lib, x: lib.mul(input=x, other=x),
    "div": lambda lib, x: lib.div(input=x, other=x + 1),
    "true_divide": lambda lib, x: lib.true_divide(input=x, other=x + 1),
    "rsub": lambda lib, x: lib.rsub(input=x, other=1.0),
    "pow": lambda lib, x: lib.pow(input=x, exponent=2),
    "matmul": lambda lib, x: lib.matmul(input=x, other=x.t()),
    "mm": lambda lib, x: lib.mm(input=x, mat2=x.t()),
    "mv": lambda lib, x: lib.mv(input=x, vec=x[0]),
    "dot": lambda lib, x: lib.dot(input=x[0], tensor=x[1]),
    "where": lambda lib, x: lib.where(condition=x > 0.3, input=x, other=-x),
    "clamp": lambda lib, x: lib.clamp(input=x, min=0.2, max=0.6),
    "clip": lambda lib, x: lib.clip(input=x, max=0.5),
    "sum": lambda lib, x: lib.sum(input=x, dim=-1, keepdim=True),
    "mean": lambda lib, x: lib.mean(input=x, dim=(0, 1)),
    "var": lambda lib, x: lib.var(input=x, dim=0, correction=0),
    "std": lambda lib, x: lib.std(input=x),
    "max": lambda lib, x: lib.max(input=x, dim=1),
    "min_other": lambda lib, x: lib.min(x, other=x * 2),
    "maximum": lambda lib, x: lib.maximum(input=x, other=1 - x),
    "argmax": lambda lib, x: lib.argmax(input=x, dim=1),
    "softmax": lambda lib, x: lib.softmax(input=x, dim=-1),
    "log_softmax": lambda lib, x: lib.log_softmax(input=x, dim=0),
    "norm": lambda lib, x: lib.norm(input=x),
    "reshape": lambda lib, x: lib.reshape(input=x, shape=(3, 2)),
    "reshape_method": lambda lib, x: x.reshape(shape=(6,)),
    "view_method": lambda lib, x: x.view(size=(3, 2)),
    "expand_method": lambda lib, x: x.expand(size=(2, 2, 3)),
    "permute": lambda lib, x: lib.permute(input=x, dims=(1, 0)),
    "permute_method": lambda lib, x: x.permute(dims=(1, 0)),
    "transpose": lambda lib, x: lib.transpose(input=x, dim0=0, dim1=1),
    "swapaxes": lambda lib, x: lib.swapaxes(input=x, axis0=0, axis1=-1),
    "swapaxes_method": lambda lib, x: x.swapaxes(axis0=1, axis1=0),
    "flatten": lambda lib, x: lib.flatten(input=x, start_dim=0),
    "squeeze": lambda lib, x: lib.squeeze(input=x[None], dim=0),
    "unsqueeze": lambda lib, x: lib.unsqueeze(input=x, dim=-1),
    "select": lambda lib, x: lib.select(input=x, dim=1, index=-1),
    "narrow": lambda lib, x: lib.narrow(input=x, dim=1, start=1, length=2),
    "t": lambda lib, x: lib.t(input=x),
    "clone": lambda lib, x: lib.clone(input=x),
    "reciprocal": lambda lib, x: lib.reciprocal(input=x),
    "neg": lambda lib, x: lib.neg(input=x),
    "square": lambda lib, x: lib.square(input=x),
    "eq": lambda lib, x: lib.eq(input=x, other=x),
    "gt": lambda lib, x: lib.gt(input=x, other=0.3),
    "logical_not": lambda lib, x: lib.logical_not(input=x > 0.3),
    "isnan": lambda lib, x: lib.isnan(input=x),
    "isfinite": lambda lib, x: lib.isfinite(input=x),
    "allclose": lambda lib, x: lib.allclose(input=x, other=x),
    "equal": lambda lib, x: lib.equal(input=x, other=x),
    "numel": lambda lib, x: lib.numel(input=x),
    "detach": lambda lib, x: lib.detach(input=x),
    "all": lambda lib, x: lib.all(input=x > 0),
    "zeros_like": lambda lib, x: lib.zeros_like(input=x),
    "full_like": lambda lib, x: lib.full_like(input=x, fill_value=2.5),
    "add_method_other": lambda lib, x: x.add(other=x, alpha=3),
    "where_method": lambda lib, x: x.where(condition=x > 0.3, other=-x),
    "clamp_method": lambda lib, x: x.clamp(min=0.2),
    "transpose_method": lambda lib, x: x.transpose(dim0=1, dim1=0),
    "copy_method": lambda lib, x: lib.zeros(2, 3, dtype=lib.float64).copy_(other=x.detach() * 2),
}


@pytest.mark.parametrize("name", sorted(KEYWORD_CALLS))
def test_keyword_arguments_have_torchs_names(name):
    _both(KEYWORD_CALLS[name])


def _torch_parameter_names(name: str) -> list[str]:
    """The parameters torch's argument parser names for torch.<name>, read from its no-argument error."""
    try:
        getattr(torch, name)()
    except TypeError as exc:
        return _parameter_names_in(str(exc))
    except Exception:  # an op that takes a list and fails otherwise on none (meshgrid)
        return []
    return []


OTHER_OVERLOADS = {"out_dtype"}  # mm(input, mat2, out_dtype): torch's low-precision CUDA overload
METHODS_TAKING_ANYTHING = {"to"}  # to(*args, **kwargs): parsed by hand, as torch's overloads are
METHOD_OTHER_OVERLOADS: set = set()  # (method, parameter) torch names only in an overload the engine lacks


def test_every_function_takes_torchs_keyword_names():
    """Each engine.<name> that torch has accepts torch's names for its arguments, as keywords."""
    if torch is None:
        pytest.skip("torch is not installed")
    wrong = {}
    for name, fn in sorted(api.FUNCTIONS.items()):
        params = inspect.signature(fn).parameters
        missing = [p for p in _torch_parameter_names(name) if p not in params and p not in OTHER_OVERLOADS]
        if missing:
            wrong[name] = missing
    assert wrong == {}


def _torch_method_parameter_names(name: str) -> list[str]:
    """The parameters torch's argument parser names for Tensor.<name>, read from its no-argument error."""
    try:
        getattr(torch.ones(2), name)()
    except TypeError as exc:
        return _parameter_names_in(str(exc))
    except Exception:  # a method that needs no argument, or fails otherwise
        return []
    return []


def _parameter_names_in(text: str) -> list[str]:
    missing = re.search(r"missing \d+ required positional arguments?: (.*)$", text.splitlines()[0])
    if missing:
        return re.findall(r"[\"'](\w+)[\"']", missing.group(1))
    names: set[str] = set()
    for signature in re.findall(r"\* \(([^)]*)\)|expected \(([^)]*)\)", text):
        params = (signature[0] or signature[1]).split(", *,")[0]
        names.update(p.split("=")[0].split()[-1] for p in params.split(", ") if p and p != "*")
    return sorted(names - {"self", "out"})


def test_every_method_takes_torchs_keyword_names():
    """Each Tensor.<name> the engine has takes torch's names for its arguments, as keywords."""
    if torch is None:
        pytest.skip("torch is not installed")
    wrong = {}
    for name in sorted(set(api.METHODS) | set(tensor_methods.METHODS)):
        method = getattr(engine.Tensor, name)
        if name.startswith("_") or isinstance(method, property) or name in METHODS_TAKING_ANYTHING:
            continue
        params = inspect.signature(method).parameters
        missing = [
            p
            for p in _torch_method_parameter_names(name)
            if p not in params and (name, p) not in METHOD_OTHER_OVERLOADS
        ]
        if missing:
            wrong[name] = missing
    assert wrong == {}


# ---------------------------------------------------------------------------- Tensor.type()

TYPE_CASES = {
    "name": lambda lib, x: x.type(),
    "int name": lambda lib, x: x.int().type(),
    "bool name": lambda lib, x: x.bool().type(),
    "half name": lambda lib, x: x.half().type(),
    "short name": lambda lib, x: x.short().type(),
    "char name": lambda lib, x: x.char().type(),
    "byte name": lambda lib, x: x.byte().type(),
    "long name": lambda lib, x: x.long().type(),
    "dtype": lambda lib, x: x.type(lib.float64),
    "dtype keyword": lambda lib, x: x.type(dtype=lib.int32),
    "string": lambda lib, x: x.type(lib.__name__ + ".DoubleTensor"),
    "string int": lambda lib, x: x.type(lib.__name__ + ".LongTensor"),
    "same dtype is self": lambda lib, x: x.type(lib.float64) is x,
    "same string is self": lambda lib, x: x.type(lib.__name__ + ".DoubleTensor") is x,
}


@pytest.mark.parametrize("case", sorted(TYPE_CASES))
def test_tensor_type(case):
    result = _both(TYPE_CASES[case], device="cpu")  # the names of CPU tensors
    if isinstance(result, str):
        assert result.startswith("engine.")


def test_tensor_type_reads_torch_names_too():
    """A string written for torch ("torch.DoubleTensor") works unchanged (`import engine as torch`)."""
    assert engine.ones(2).type("torch.DoubleTensor").dtype is engine.float64


@pytest.mark.parametrize("spec", ["foo", "engine.float64", "engine.Double", "numpy.DoubleTensor"])
def test_tensor_type_refuses_other_strings(spec):
    check_error(lambda lib: lib.ones(2).type(spec.replace("engine", lib.__name__)), exception=ValueError)


def test_tensor_type_on_the_gpu_is_named_cuda(fake_cuda):
    x = engine.ones(2).type("engine.cuda.DoubleTensor")
    assert x.device == engine.device("cuda:0") and x.dtype is engine.float64
    assert x.type() == "engine.cuda.DoubleTensor"
    assert x.type("engine.FloatTensor").device == engine.device("cpu")


# --------------------------------------------------------------------------- dtype aliases

ALIASES = [
    "float",
    "double",
    "half",
    "long",
    "int",
    "short",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
]


@pytest.mark.parametrize("name", ALIASES)
def test_dtype_aliases(name):
    dt = getattr(engine, name)
    assert isinstance(dt, engine.dtype)
    if torch is not None:
        assert repr(dt).replace("engine", "torch") == repr(getattr(torch, name))
        t = torch.zeros(2, dtype=getattr(torch, name))
        e = engine.zeros(2, dtype=dt, device="cpu")
        assert e.type() == t.type().replace("torch", "engine")
        assert e.element_size() == t.element_size()


@pytest.mark.parametrize("name", ["int8", "int16"])
def test_new_integer_dtypes_promote_as_torch(name):
    def fn(lib, x):
        small = lib.tensor([[1, -2, 3], [4, 5, -6]], dtype=getattr(lib, name))
        return (small + small, small * 2, small + lib.tensor([1], dtype=lib.uint8), small + x, small.sum())

    _both(fn)


# ----------------------------------------------------------------------------------- new_*

NEW_CASES = {
    "zeros varargs": lambda lib, x: x.new_zeros(2, 3),
    "zeros tuple": lambda lib, x: x.new_zeros((2, 3)),
    "zeros list": lambda lib, x: x.new_zeros([4]),
    "zeros size kw": lambda lib, x: x.new_zeros(size=(2,)),
    "zeros 0-dim": lambda lib, x: x.new_zeros(()),
    "zeros Size": lambda lib, x: x.new_zeros(x.shape),
    "ones dtype": lambda lib, x: x.new_ones(3, dtype=lib.int64),
    "ones requires_grad": lambda lib, x: x.new_ones(3, requires_grad=True).requires_grad,
    "empty shape": lambda lib, x: x.new_empty(2, 5).shape,
    "full": lambda lib, x: x.new_full((2,), 3),
    "full size kw": lambda lib, x: x.new_full(size=(2, 2), fill_value=1.5),
    "full int dtype": lambda lib, x: x.new_full((2,), 7, dtype=lib.int32),
    "tensor keeps dtype": lambda lib, x: x.new_tensor([1, 2]),
    "tensor data kw": lambda lib, x: x.new_tensor(data=[[1.5]]),
    "tensor dtype": lambda lib, x: x.new_tensor([1, 2], dtype=lib.bool),
    "tensor of int": lambda lib, x: x.long().new_tensor([1.7, 2.2]),
    "tensor requires_grad": lambda lib, x: x.new_tensor([1.0], requires_grad=True).is_leaf,
}


@pytest.mark.parametrize("case", sorted(NEW_CASES))
def test_new_methods(case):
    _both(NEW_CASES[case])


def test_new_tensor_of_a_tensor_copies_and_warns():
    def fn(lib, x):
        with pytest.warns(UserWarning, match=r"rather than tensor.new_tensor\(sourceTensor\)") as record:
            y = x.new_tensor(x)
        return y, str(record[0].message), y.requires_grad, y.is_leaf

    _both(fn)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_tensor_of_a_tensor_copies_and_warns_as_torch(torch, requires_grad):
    messages = []
    for lib in (engine, torch):
        x = lib.ones(2, requires_grad=requires_grad)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            y = lib.tensor(x)
            lib.as_tensor(x, dtype=lib.float64)
            x.new_tensor([1.0])
        assert [(w.category, w.filename) for w in record] == [(UserWarning, __file__)]
        assert y.tolist() == [1.0, 1.0] and y.is_leaf and not y.requires_grad
        messages.append(str(record[0].message))
    assert messages[0] == messages[1].replace("torch.tensor", "engine.tensor")


@pytest.mark.parametrize(
    "call, exception",
    [
        (lambda lib: lib.ones(2).new_ones(), TypeError),
        (lambda lib: lib.ones(2).new_zeros(), TypeError),
        (lambda lib: lib.ones(2).int().new_zeros(2, requires_grad=True), RuntimeError),
        (lambda lib: lib.ones(2).new_tensor([1, 2], dtype=lib.int64, requires_grad=True), RuntimeError),
    ],
)
def test_new_methods_errors(call, exception):
    check_error(call, exception=exception)


# ------------------------------------------------------------------------------ engine.device

DEVICE_CASES = [
    ("cpu",),
    ("cuda",),
    ("cuda:0",),
    ("cuda:3",),
    ("cpu:0",),
    ("cuda", 0),
    ("cuda", 2),
    ("cpu", 0),
]


@pytest.mark.parametrize("args", DEVICE_CASES, ids=str)
def test_device_is_made_as_torchs(args):
    d = engine.device(*args)
    if torch is not None:
        t = torch.device(*args)
        assert (repr(d), str(d), d.type, d.index) == (repr(t), str(t), t.type, t.index)
    assert engine.device(d) == d and hash(engine.device(d)) == hash(d)


def test_device_keywords():
    assert engine.device(type="cuda", index=2) == engine.device("cuda:2")


@pytest.mark.parametrize(
    "a, b",
    [("cpu", "cpu"), ("cuda", "cuda:0"), ("cuda:0", "cuda:0"), ("cuda:1", "cuda:0"), ("cpu", "cpu:0")],
)
def test_device_equality(lib, a, b):
    """Devices compare by type and index ("cuda" has none, so it is not "cuda:0"); never equal to a string."""
    da, db = lib.device(a), lib.device(b)
    expected = (da.type, da.index) == (db.type, db.index)
    assert (da == db) is expected and (da != db) is not expected
    assert (da == a) is False and (da != a) is True
    assert (da == 0) is False


@pytest.mark.parametrize(
    "args, exception",
    [
        (("foo",), RuntimeError),
        (("CPU",), RuntimeError),
        (("foo:1",), RuntimeError),
        (("cuda:-1",), RuntimeError),
        (("cuda:x",), RuntimeError),
        (("cuda:01",), RuntimeError),
        (("cuda:",), RuntimeError),
        (("cuda:0:1",), RuntimeError),
        ((" cpu",), RuntimeError),
        (("cuda:0", 1), RuntimeError),
        (("cuda", -1), RuntimeError),
        (("cuda", 1.0), TypeError),
        (("cuda", True), TypeError),
        ((None,), TypeError),
        ((1.5,), TypeError),
        ((None, 0), TypeError),
    ],
    ids=str,
)
def test_device_errors(args, exception):
    check_error(lambda lib: lib.device(*args), exception=exception)


def test_device_types_torch_has_and_the_engine_lacks():
    with pytest.raises(RuntimeError, match="engine supports the cpu and cuda device types only, not mps"):
        engine.device("mps")


def test_device_index_without_a_gpu(monkeypatch):
    _no_cupy(monkeypatch)
    check_error(lambda lib: lib.device(0), "Cannot access accelerator device when none is available.")


def test_device_index_with_a_gpu(fake_cuda):
    assert engine.device(0) == engine.device("cuda:0")


def test_cuda_without_index_lands_on_the_current_gpu(fake_cuda):
    """As in torch, "cuda" places data on the current GPU, and the tensor's device names its index."""
    x = engine.ones(2, device="cuda")
    assert x.device == engine.device("cuda:0") and x.device != engine.device("cuda")
    assert x.to("cuda") is x and x.to(engine.device("cuda")) is x
    y = engine.zeros(2).to(device="cuda")
    assert y.device == engine.device("cuda", 0)
    assert engine.as_tensor(x, device="cuda") is x and engine.as_tensor(x, device="cuda:0") is x


def test_as_tensor_keeps_a_tensor_on_its_device_given_by_string(lib):
    x = lib.ones(2, device="cpu")
    assert lib.as_tensor(x, device="cpu") is x


def test_device_pickles():
    import pickle

    d = engine.device("cuda", 1)
    assert pickle.loads(pickle.dumps(d)) == d


# ------------------------------------------------------------------------------- engine.cuda


def _no_cupy(monkeypatch):
    """This machine without CuPy, whatever is installed."""

    def missing():
        raise ImportError("No module named 'cupy'")

    monkeypatch.setattr(backend, "_import_cupy", missing)
    monkeypatch.setattr(backend, "_cupy", [])


def test_cuda_namespace_without_cupy(monkeypatch):
    _no_cupy(monkeypatch)
    assert engine.cuda.is_available() is False
    assert engine.cuda.device_count() == 0
    assert engine.cuda.manual_seed(3) is None  # torch seeds lazily: nothing to do, no error
    assert engine.cuda.manual_seed_all(3) is None
    for call in (engine.cuda.synchronize, engine.cuda.current_device):
        with pytest.raises(backend.CudaUnavailable, match="CuPy is not installed"):
            call()


def test_cuda_namespace_without_a_gpu(monkeypatch):
    cupy, _ = __import__("fake_cupy").make(device_count=0)
    monkeypatch.setattr(backend, "_import_cupy", lambda: (cupy, None))
    monkeypatch.setattr(backend, "_cupy", [])
    assert engine.cuda.is_available() is False and engine.cuda.device_count() == 0
    with pytest.raises(backend.CudaUnavailable, match="no CUDA GPU is present"):
        engine.cuda.synchronize()


def test_cuda_namespace_with_a_gpu(fake_cuda):
    assert engine.cuda.is_available() is True
    assert engine.cuda.device_count() == 1
    assert engine.cuda.current_device() == 0
    assert engine.cuda.synchronize() is None and engine.cuda.synchronize("cuda:0") is None
    assert engine.cuda.synchronize(0) is None


def test_cuda_manual_seed_seeds_the_gpu_only(fake_cuda):
    def draws():
        return engine.rand(4).numpy(), engine.rand(4, device="cuda").cpu().numpy()

    engine.manual_seed(1)
    cpu_1, gpu_1 = draws()
    engine.manual_seed(1)
    engine.cuda.manual_seed(7)
    cpu_2, gpu_7 = draws()
    assert np.array_equal(cpu_2, cpu_1) and not np.array_equal(gpu_7, gpu_1)
    engine.cuda.manual_seed(7)
    assert np.array_equal(draws()[1], gpu_7)
    engine.cuda.manual_seed_all(7)
    assert np.array_equal(draws()[1], gpu_7)
    engine.manual_seed(1)  # every device again, the GPU's own seed forgotten
    assert all(np.array_equal(a, b) for a, b in zip(draws(), (cpu_1, gpu_1)))


def test_cuda_manual_seed_does_not_disturb_the_cpu_stream(fake_cuda):
    engine.manual_seed(2)
    a = engine.rand(3)
    engine.cuda.manual_seed(9)
    b = engine.rand(3)
    engine.manual_seed(2)
    assert np.array_equal(engine.rand(3).numpy(), a.numpy())
    assert np.array_equal(engine.rand(3).numpy(), b.numpy())


# ------------------------------------------------------------------------ creation arguments

RANDINT_CASES = {
    "high, size": lambda lib: lib.randint(5, (3,)),
    "low, high, size": lambda lib: lib.randint(2, 5, (2, 2)),
    "keywords": lambda lib: lib.randint(low=1, high=4, size=(3,)),
    "high keyword": lambda lib: lib.randint(high=4, size=(3,)),
    "high positional, size keyword": lambda lib: lib.randint(4, size=(2,)),
    "dtype": lambda lib: lib.randint(0, 5, (3,), dtype=lib.int32),
    "float requires grad": lambda lib: lib.randint(0, 5, (3,), dtype=lib.float32, requires_grad=True),
}


@pytest.mark.parametrize("case", sorted(RANDINT_CASES))
def test_randint_forms(case):
    def meta(lib):
        t = RANDINT_CASES[case](lib)
        values = t.detach().numpy()
        assert ((values >= 0) & (values < 5)).all()
        return str(t.dtype).split(".")[1], tuple(t.shape), t.requires_grad, t.is_leaf

    ours = meta(engine)
    if torch is not None:
        assert ours == meta(torch)


@pytest.mark.parametrize("args", [(0, 5, (3,)), (5, (3,))], ids=str)
def test_randint_refuses_requires_grad(args):
    check_error(
        lambda lib: lib.randint(*args, requires_grad=True),
        "Only Tensors of floating point and complex dtype can require gradients",
    )


def test_linspace_bool_is_refused():
    check_error(
        lambda lib: lib.linspace(0, 1, 5, dtype=lib.bool, device="cpu"),
        "\"linspace_cpu\" not implemented for 'Bool'",
        exception=NotImplementedError,
    )


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float64"])
def test_linspace_other_dtypes(dtype):
    def fn(lib):
        return lib.linspace(0, 3, 5, dtype=getattr(lib, dtype))

    ours = fn(engine)
    assert ours.dtype is getattr(engine, dtype)
    if torch is not None:
        _same(ours, fn(torch))


# ---------------------------------------------------------------------- is_tensor and numel


@pytest.mark.parametrize(
    "make",
    [lambda lib: lib.ones(2), lambda lib: lib.nn.Parameter(lib.ones(2)), lambda lib: 3, lambda lib: [1]],
)
def test_is_tensor(lib, make):
    assert lib.is_tensor(make(lib)) is isinstance(make(lib), lib.Tensor)


@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (4, 1, 2)])
def test_numel(lib, shape):
    assert lib.numel(lib.zeros(shape)) == int(np.prod(shape))


@pytest.mark.parametrize("value", [3, [1, 2], None])
def test_numel_of_a_non_tensor(value):
    check_error(lambda lib: lib.numel(value), exception=TypeError)


# ---------------------------------------------------------------------------- finfo / iinfo

FLOATS = ["float32", "float64", "float16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]


def _info_fields(info):
    names = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")
    return {n: getattr(info, n) for n in names if hasattr(info, n)}


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    info = engine.finfo(getattr(engine, name))
    assert info.dtype == name and info.bits == 8 * getattr(engine, name).itemsize
    assert info == engine.finfo(type=getattr(engine, name)) and not info != engine.finfo(
        getattr(engine, name)
    )
    assert info != engine.finfo(engine.float64 if name != "float64" else engine.float32)
    if torch is not None:
        theirs = torch.finfo(getattr(torch, name))
        assert _info_fields(info) == _info_fields(theirs)
        assert repr(info) == repr(theirs) and str(info) == str(theirs)
        assert all(type(v) is type(getattr(theirs, k)) for k, v in _info_fields(info).items())


def test_finfo_defaults_to_the_default_dtype():
    assert engine.finfo() == engine.finfo(engine.float32)
    engine.set_default_dtype(engine.float64)
    try:
        assert engine.finfo() == engine.finfo(engine.float64)
    finally:
        engine.set_default_dtype(engine.float32)


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    info = engine.iinfo(getattr(engine, name))
    assert info.dtype == name and info == engine.iinfo(getattr(engine, name))
    if torch is not None:
        theirs = torch.iinfo(getattr(torch, name))
        assert _info_fields(info) == _info_fields(theirs)
        assert repr(info) == repr(theirs)


def test_infos_are_unhashable_like_torchs():
    with pytest.raises(TypeError):
        hash(engine.finfo())
    with pytest.raises(TypeError):
        hash(engine.iinfo(engine.int8))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.finfo(lib.int32),
        lambda lib: lib.finfo(lib.bool),
        lambda lib: lib.finfo("float32"),
        lambda lib: lib.finfo(3),
        lambda lib: lib.iinfo(lib.float32),
        lambda lib: lib.iinfo(lib.bool),
        lambda lib: lib.iinfo("int32"),
        lambda lib: lib.iinfo(),
    ],
)
def test_info_errors(call):
    check_error(call, exception=TypeError)


def test_no_warning_from_plain_new_methods():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine.ones(2).new_tensor([1.0, 2.0])
        engine.ones(2).new_zeros(3)


@pytest.mark.parametrize("change", ["set", "set None", "delete"])
def test_grad_fn_is_not_writable(lib, change):
    """torch's grad_fn is read-only (setting `_grad_fn = None` is how torch detaches in place)."""
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(
        AttributeError,
        match="attribute 'grad_fn' of '(torch._C.TensorBase|engine.Tensor)' objects is not writable",
    ):
        if change == "delete":
            del y.grad_fn
        else:
            y.grad_fn = None if change == "set None" else x.grad_fn
    assert y.grad_fn is not None and not y.is_leaf


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.empty(0, 3),
        lambda lib: lib.zeros(2, 0),
        lambda lib: lib.ones(0),
        lambda lib: lib.zeros(3, 0, 2),
        lambda lib: lib.empty(2, 3, 0, dtype=lib.float64),
        lambda lib: lib.zeros(0, 3).reshape(3, 0),
        lambda lib: lib.zeros(2, 3)[:, 3:],
        lambda lib: lib.ones(0, 4).sum(1, keepdim=True),
    ],
)
def test_empty_tensors_have_torchs_strides(make, torch):
    """torch strides an empty tensor as a contiguous one whose sizes of 0 count as 1."""
    ours, theirs = make(engine), make(torch)
    assert ours.stride() == theirs.stride()
    assert ours.stride(0) == theirs.stride(0)


@pytest.mark.parametrize(
    "dtype, p, expected",
    [
        ("float32", 0.0, [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
        ("float64", 1.0, [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]),
        ("int64", 1.0, [[1, 1, 1], [1, 1, 1]]),
        ("bool", [0.0, 1.0, 1.0], [[False, True, True], [False, True, True]]),
        ("float32", [[0.0], [1.0]], [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]),
    ],
)
def test_bernoulli_fills_in_place_with_torchs_certain_draws(lib, dtype, p, expected):
    t = lib.empty(2, 3, dtype=getattr(lib, dtype))
    p = lib.tensor(p) if isinstance(p, list) else p
    assert t.bernoulli_(p) is t
    assert t.tolist() == expected and t.dtype == getattr(lib, dtype)


def test_bernoulli_draws_from_the_seeded_generator():
    engine.manual_seed(5)
    first = engine.empty(1000).bernoulli_(0.25)
    engine.manual_seed(5)
    assert engine.equal(engine.empty(1000).bernoulli_(0.25), first)
    assert 150 < first.sum().item() < 350


@pytest.mark.parametrize("tensor_p", [False, True])
def test_bernoulli_is_recorded_as_torchs_node_with_zero_gradients(lib, tensor_p):
    x = lib.ones(3, requires_grad=True)
    p = lib.full((3,), 0.5, requires_grad=True) if tensor_p else 0.5
    y = (x * 2).bernoulli_(p)
    assert type(y.grad_fn).__name__ == ("BernoulliBackward1" if tensor_p else "BernoulliBackward2")
    assert [type(fn).__name__ for fn, _ in y.grad_fn.next_functions] == ["MulBackward0"] + [
        "AccumulateGrad"
    ] * tensor_p
    (y * 3).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert not tensor_p or p.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.zeros(3).bernoulli_(1.5),
        lambda lib: lib.zeros(3).bernoulli_(-0.5),
        lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0.5, 0.1])),
        lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0.5, 2.0, 0.1])),
        lambda lib: lib.ones(3, requires_grad=True).bernoulli_(),
    ],
)
def test_bernoulli_errors_are_torchs(call):
    check_error(call)
