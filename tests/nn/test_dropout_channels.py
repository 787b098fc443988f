"""Channel-wise dropout (Dropout1d/2d/3d): whole channels zeroed, torch's graphs, warnings and errors."""

import warnings

import numpy as np
import pytest

import engine


def _functional(lib):
    return lib.nn.functional


@pytest.mark.parametrize(
    ("name", "shape", "channel_dims"),
    [
        ("dropout1d", (40, 30, 5), 2),
        ("dropout1d", (30, 5), 1),
        ("dropout2d", (20, 30, 3, 4), 2),
        ("dropout3d", (10, 30, 2, 3, 2), 2),
        ("dropout3d", (30, 2, 3, 2), 1),
    ],
)
def test_whole_channels_are_zeroed_or_scaled(name, shape, channel_dims):
    engine.manual_seed(0)
    x = engine.ones(*shape, dtype=engine.float64, requires_grad=True)
    y = getattr(engine.nn.functional, name)(x, 0.25)
    per_channel = y.detach().numpy().reshape(*shape[:channel_dims], -1)
    firsts = per_channel[..., :1]
    assert (per_channel == firsts).all()
    np.testing.assert_allclose(np.unique(firsts), [0.0, 1 / 0.75])
    assert abs((firsts == 0).mean() - 0.25) < 0.1
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


def _graph(t) -> list:
    names, node = [], t.grad_fn
    while node is not None:
        names.append(node.name().split("::")[-1])
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@pytest.mark.parametrize(
    ("name", "shape", "p"),
    [
        ("dropout1d", (2, 3, 4), 0.5),
        ("dropout1d", (3, 4), 0.5),
        ("dropout2d", (2, 3, 4, 5), 0.5),
        ("dropout3d", (3, 2, 2, 2), 0.5),
        ("dropout3d", (2, 3, 2, 2, 2), 1.0),
        ("dropout2d", (2, 3, 4, 5), 1.0),
    ],
)
def test_graph_and_mask_shape_as_torch(torch, name, shape, p):
    graphs, masks = [], []
    for lib in (engine, torch):
        x = lib.randn(*shape, requires_grad=True)
        y = getattr(_functional(lib), name)(x, p)
        graphs.append(_graph(y))
        mul = next(n for n in [y.grad_fn, y.grad_fn.next_functions[0][0]] if n.name() == "MulBackward0")
        masks.append(tuple(mul._saved_other.shape))
    assert graphs[0] == graphs[1]
    assert masks[0] == masks[1]


def _caught(lib, name, shape, **kw):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            getattr(_functional(lib), name)(lib.ones(*shape), **kw)
            error = None
        except Exception as err:  # noqa: BLE001 -- compared with torch's
            error = (type(err).__name__, str(err))
    return [str(w.message) for w in seen], error


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("dropout1d", (3,)),
        ("dropout1d", (2, 3, 4, 5)),
        ("dropout2d", (3,)),
        ("dropout2d", (2, 3, 4)),
        ("dropout2d", (2, 3)),
        ("dropout2d", (1, 2, 3, 4, 5)),
        ("dropout3d", (2, 3)),
        ("dropout3d", (3,)),
        ("dropout3d", (2, 2, 2, 2, 2, 2)),
        ("dropout2d", (0, 3, 4)),
        ("dropout1d", (2, 3)),
    ],
)
def test_warnings_and_errors_as_torch(torch, name, shape):
    assert _caught(engine, name, shape) == _caught(torch, name, shape)
    assert _caught(engine, name, shape, p=1.5) == _caught(torch, name, shape, p=1.5)


@pytest.mark.parametrize(
    ("name", "shape"), [("dropout1d", (3, 4)), ("dropout2d", (2, 3, 4, 5)), ("dropout3d", (3, 2, 2, 2))]
)
def test_inplace_changes_the_input(lib, name, shape):
    x = lib.ones(*shape)
    y = getattr(_functional(lib), name)(x, 0.5, inplace=True)
    assert y is x and tuple(x.shape) == shape
    assert x._version > 0
    values = np.unique(x.numpy())
    assert set(values) <= {0.0, 2.0}


@pytest.mark.parametrize("layer", ["Dropout1d", "Dropout2d", "Dropout3d"])
def test_modules(lib, layer):
    cls = getattr(lib.nn, layer)
    assert repr(cls(0.3)) == f"{layer}(p=0.3, inplace=False)"
    assert repr(cls(inplace=True)) == f"{layer}(p=0.5, inplace=True)"
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        cls(-0.1)
    module = cls(0.5)
    x = (
        lib.ones(2, 4, 3, 3, 3)
        if layer == "Dropout3d"
        else lib.ones(2, 4, 3, 3)[..., : 3 if layer == "Dropout2d" else 1]
    )
    x = x if layer != "Dropout1d" else x[..., 0]
    assert module.eval()(x) is x
    out = module.train()(x)
    assert out is not x and set(np.unique(out.numpy())) <= {0.0, 2.0}
