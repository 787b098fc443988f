"""Products, convolutions, norms and losses refuse mixed float dtypes with torch 2.13's CPU errors.

The engine used to promote float32 @ float64 where torch raises; gradcli's float64 check relies
on the two agreeing (a float32 weight the check cannot reach fails the same way in both).
Each message is asserted literally, and against torch's own when torch is installed.
"""

import pytest
from opcheck import check_error

D, F32 = "float64", "float32"


def r(lib, *shape, dt=D, grad=False):
    return lib.randn(*shape, dtype=getattr(lib, dt), requires_grad=grad)


def fn(lib):
    return lib.nn.functional


PRODUCTS = {
    "mm": (
        lambda lib: lib.mm(r(lib, 2, 3), r(lib, 3, 4, dt=F32)),
        "expected m1 and m2 to have the same dtype, but got: double != float",
    ),
    "matmul 2x2 float first": (lambda lib: r(lib, 2, 3, dt=F32) @ r(lib, 3, 4), "but got: float != double"),
    "matmul 2x1 (mv)": (
        lambda lib: r(lib, 2, 3) @ r(lib, 3, dt=F32),
        "addmv input tensors must have the same dtype, but got Float, Double, and Float",
    ),
    "mv": (lambda lib: lib.mv(r(lib, 2, 3, dt=F32), r(lib, 3)), "but got Double, Float, and Double"),
    "matmul 1x2": (
        lambda lib: r(lib, 3) @ r(lib, 3, 4, dt=F32),
        "expected m1 and m2 to have the same dtype, but got: double != float",
    ),
    "dot before sizes": (
        lambda lib: lib.dot(r(lib, 3), r(lib, 4, dt=F32)),
        "dot : expected both vectors to have same dtype, but found Double and Float",
    ),
    "matmul 3x2 folds into mm": (
        lambda lib: r(lib, 5, 2, 3) @ r(lib, 3, 4, dt=F32),
        "expected m1 and m2 to have the same dtype, but got: double != float",
    ),
    "matmul 3x1 folds into mv": (
        lambda lib: r(lib, 5, 2, 3) @ r(lib, 3, dt=F32),
        "but got Float, Double, and Float",
    ),
    "matmul 2x3 bmm": (
        lambda lib: r(lib, 2, 3) @ r(lib, 5, 3, 4, dt=F32),
        "expected scalar type Double but found Float",
    ),
    "matmul 2x3 folds the transpose when the matrix requires grad": (
        lambda lib: r(lib, 2, 3, grad=True) @ r(lib, 5, 3, 4, dt=F32),
        "expected m1 and m2 to have the same dtype, but got: float != double",
    ),
    "matmul 1x3 folds into mv when the vector requires grad": (
        lambda lib: r(lib, 3, grad=True) @ r(lib, 5, 3, 4, dt=F32),
        "but got Double, Float, and Double",
    ),
    "matmul 3x3": (
        lambda lib: r(lib, 5, 2, 3) @ r(lib, 5, 3, 4, dt=F32),
        "expected scalar type Double but found Float",
    ),
    "matmul 4x2 non-contiguous": (
        lambda lib: r(lib, 2, 6, 5, 3).transpose(0, 1) @ r(lib, 3, 4, dt=F32),
        "expected scalar type Double but found Float",
    ),
    "matmul long": (
        lambda lib: r(lib, 2, 3) @ lib.ones(3, 4, dtype=lib.int64),
        "but got: double != long int",
    ),
    "shapes first": (
        lambda lib: r(lib, 2, 3) @ r(lib, 4, 5, dt=F32),
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
    ),
    "baddbmm batch2": (
        lambda lib: lib.baddbmm(r(lib, 4), r(lib, 5, 2, 3), r(lib, 5, 3, 4, dt=F32)),
        "expected scalar type Double but found Float",
    ),
    "baddbmm batch1": (
        lambda lib: lib.baddbmm(r(lib, 4), r(lib, 5, 2, 3, dt=F32), r(lib, 5, 3, 4)),
        "Input dtypes must be the same, got: input double, batch1: float, batch2: double",
    ),
    "linear": (
        lambda lib: fn(lib).linear(r(lib, 2, 3), r(lib, 4, 3, dt=F32)),
        "expected m1 and m2 to have the same dtype, but got: double != float",
    ),
    "linear with bias is addmm": (
        lambda lib: fn(lib).linear(r(lib, 2, 3), r(lib, 4, 3, dt=F32), r(lib, 4, dt=F32)),
        "mat1 and mat2 must have the same dtype, but got Double and Float",
    ),
    "linear 3-D with bias": (
        lambda lib: fn(lib).linear(r(lib, 5, 2, 3), r(lib, 4, 3, dt=F32), r(lib, 4, dt=F32)),
        "mat1 and mat2 must have the same dtype, but got Double and Float",
    ),
    "linear bias alone": (
        lambda lib: fn(lib).linear(r(lib, 2, 3), r(lib, 4, 3), r(lib, 4, dt=F32)),
        "self and mat2 must have the same dtype, but got Float and Double",
    ),
}

LAYERS = {
    "conv2d float64 input": (
        lambda lib: fn(lib).conv2d(r(lib, 2, 3, 8, 8), r(lib, 4, 3, 3, 3, dt=F32)),
        "expected scalar type Double but found Float",
    ),
    "conv1d float32 input, slow kernel": (
        lambda lib: fn(lib).conv1d(r(lib, 1, 3, 8, dt=F32), r(lib, 4, 3, 3)),
        "expected scalar type Float but found Double",
    ),
    "conv2d float32 input, oneDNN": (
        lambda lib: fn(lib).conv2d(r(lib, 2, 3, 8, 8, dt=F32), r(lib, 4, 3, 3, 3)),
        "Input type (engine.FloatTensor) and weight type (engine.DoubleTensor) should be the same or input should be a MKLDNN tensor and weight is a dense tensor",
    ),
    "conv2d float32 input, 5x5 kernel": (
        lambda lib: fn(lib).conv2d(r(lib, 1, 1, 8, 8, dt=F32), r(lib, 1, 1, 5, 5)),
        "should be the same or input should be a MKLDNN tensor",
    ),
    "conv2d bias before weight": (
        lambda lib: fn(lib).conv2d(r(lib, 1, 1, 5, 5), r(lib, 1, 1, 3, 3, dt=F32), r(lib, 1, dt=F32)),
        "Input type (double) and bias type (float) should be the same",
    ),
    "conv2d shapes first": (
        lambda lib: fn(lib).conv2d(r(lib, 2, 3, 8, 8), r(lib, 4, 2, 3, 3, dt=F32)),
        "to have 2 channels, but got 3 channels instead",
    ),
    "conv_transpose2d": (
        lambda lib: fn(lib).conv_transpose2d(r(lib, 2, 3, 4, 4), r(lib, 3, 2, 3, 3, dt=F32)),
        "expected scalar type Double but found Float",
    ),
    "batch_norm float32 parameters": (
        lambda lib: fn(lib).batch_norm(
            r(lib, 2, 3), r(lib, 3, dt=F32), r(lib, 3, dt=F32).abs(), r(lib, 3, dt=F32), r(lib, 3, dt=F32)
        ),
        "mixed dtype (CPU): all inputs must share same datatype.",
    ),
    "batch_norm float64 parameters of a float32 input": (
        lambda lib: fn(lib).batch_norm(r(lib, 2, 3, dt=F32), r(lib, 3), r(lib, 3).abs(), training=True),
        "mixed dtype (CPU): expect parameter to have scalar type of Float",
    ),
    "batch_norm the weight decides": (
        lambda lib: fn(lib).batch_norm(
            r(lib, 2, 3), r(lib, 3, dt=F32), r(lib, 3, dt=F32).abs(), r(lib, 3), r(lib, 3)
        ),
        "expected scalar type Double but found Float",
    ),
    "layer_norm": (
        lambda lib: fn(lib).layer_norm(r(lib, 2, 3), (3,), r(lib, 3, dt=F32)),
        "mixed dtype (CPU): all inputs must share same datatype.",
    ),
    "layer_norm bias alone": (
        lambda lib: fn(lib).layer_norm(r(lib, 2, 3), (3,), r(lib, 3), r(lib, 3, dt=F32)),
        "expected scalar type Double but found Float",
    ),
    "group_norm": (
        lambda lib: fn(lib).group_norm(r(lib, 2, 4), 2, r(lib, 4, dt=F32)),
        "mixed dtype (CPU): all inputs must share same datatype.",
    ),
    "instance_norm weight": (
        lambda lib: fn(lib).instance_norm(r(lib, 2, 3, 4), weight=r(lib, 3, dt=F32)),
        "mixed dtype (CPU): all inputs must share same datatype.",
    ),
    "nll_loss weight": (
        lambda lib: fn(lib).nll_loss(r(lib, 2, 3), lib.tensor([0, 1]), weight=lib.ones(3)),
        "expected scalar type Double but found Float",
    ),
    "cross_entropy weight": (
        lambda lib: fn(lib).cross_entropy(
            r(lib, 2, 3), lib.tensor([0, 1]), weight=lib.ones(3), label_smoothing=0.1
        ),
        "expected scalar type Double but found Float",
    ),
    "binary_cross_entropy target": (
        lambda lib: fn(lib).binary_cross_entropy(r(lib, 3).sigmoid(), lib.rand(3)),
        "Found dtype Float but expected Double",
    ),
}


@pytest.mark.parametrize("build, message", PRODUCTS.values(), ids=PRODUCTS.keys())
def test_products_refuse_mixed_dtypes_as_torch(build, message):
    check_error(build, message)


@pytest.mark.parametrize("build, message", LAYERS.values(), ids=LAYERS.keys())
def test_layers_refuse_mixed_dtypes_as_torch(build, message):
    check_error(build, message)


@pytest.mark.parametrize(
    "build",
    [
        lambda lib: fn(lib).batch_norm(
            r(lib, 2, 3, dt="float16"), r(lib, 3, dt=F32), r(lib, 3, dt=F32).abs()
        ),
        lambda lib: fn(lib).layer_norm(r(lib, 2, 3, dt="bfloat16"), (3,), r(lib, 3, dt=F32)),
        lambda lib: fn(lib).instance_norm(r(lib, 2, 3, 4), r(lib, 3, dt=F32), r(lib, 3, dt=F32).abs()),
        lambda lib: fn(lib).conv_transpose2d(r(lib, 1, 3, 4, 4), r(lib, 3, 2, 3, 3), r(lib, 2, dt=F32)),
    ],
    ids=[
        "float16 input, float32 statistics",
        "bfloat16 input, float32 weight",
        "instance_norm statistics",
        "conv_transpose bias",
    ],
)
def test_the_mixes_torch_allows_run(build):
    import engine

    assert build(engine) is not None
