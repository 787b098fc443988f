"""engine.nn modules: registration, traversal, modes, conversion, state_dict, hooks, reprs, inits.

The module under test is ENGINE_MODULE ("engine" by default); ENGINE_MODULE=torch runs the
same expectations against PyTorch 2.13 (messages name the module under test, so "torch"
in PyTorch's text reads "engine" here).
"""

import copy
import math
import os
import re

import numpy as np
import pytest

torch = pytest.importorskip(os.environ.get("ENGINE_MODULE", "engine"))
nn = torch.nn
F = nn.functional
NAME = torch.__name__


def exact(message):
    return "^" + re.escape(message) + "$"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)
        self.register_buffer("scale", torch.ones(1))
        self.register_buffer("tmp", torch.zeros(1), persistent=False)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.fc(x))) * self.scale


# ------------------------------------------------------------------------------ Parameter


def test_parameter_is_a_leaf_tensor_requiring_grad():
    data = torch.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, torch.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert (
        repr(nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False))
        == "Parameter containing:\ntensor([1., 2.])"
    )
    assert repr(nn.Parameter()) == "Parameter containing:\ntensor([], requires_grad=True)"
    assert type(p * 2) is torch.Tensor and type(p.detach()) is torch.Tensor
    assert (p * 2).grad_fn.name() == "MulBackward0"
    with torch.no_grad():
        data[0] = 5.0  # storage is shared, as with torch.nn.Parameter
    assert p.tolist() == [5.0, 2.0]


def test_parameter_deepcopy():
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
    with torch.no_grad():
        q.mul_(2)
    assert p.tolist() == [1.0, 2.0]


# ---------------------------------------------------------------------------- registration


def test_registration_and_traversal_order():
    n = Net()
    assert [k for k, _ in n.named_parameters()] == ["fc.weight", "fc.bias", "bn.weight", "bn.bias"]
    assert [k for k, _ in n.named_buffers()] == [
        "scale",
        "tmp",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
    ]
    assert [k for k, _ in n.named_modules()] == ["", "fc", "bn", "act"]
    assert list(n.children()) == [n.fc, n.bn, n.act]
    assert len(list(n.modules())) == 4
    assert list(n.state_dict()) == [
        "scale",
        "fc.weight",
        "fc.bias",
        "bn.weight",
        "bn.bias",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
    ]
    assert dict(n.state_dict()._metadata) == {
        "": {"version": 1},
        "fc": {"version": 1},
        "bn": {"version": 2},
        "act": {"version": 1},
    }
    assert n.get_submodule("fc") is n.fc and n.get_parameter("fc.bias") is n.fc.bias


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.modules())) == 3


def test_assignment_errors():
    n = Net()
    with pytest.raises(
        TypeError,
        match=exact(f"cannot assign 'int' as child module 'fc' ({NAME}.nn.Module or None expected)"),
    ):
        n.fc = 3
    value = torch.ones(2, 3)
    type_name = f"{NAME}.cuda.FloatTensor" if value.is_cuda else f"{NAME}.FloatTensor"  # torch.typename's
    with pytest.raises(
        TypeError,
        match=exact(
            f"cannot assign '{type_name}' as parameter 'weight' ({NAME}.nn.Parameter or None expected)"
        ),
    ):
        n.fc.weight = value
    with pytest.raises(
        TypeError,
        match=exact(
            f"cannot assign 'int' as buffer 'scale' ({NAME}.nn.Buffer, {NAME}.Tensor or None expected)"
        ),
    ):
        n.scale = 3
    with pytest.raises(KeyError, match="attribute 'fc' already exists"):
        n.register_buffer("fc", torch.ones(1))
    with pytest.raises(
        TypeError,
        match=exact(
            f"cannot assign '{type_name}' object to parameter 'w' ({NAME}.nn.Parameter or None required)"
        ),
    ):
        n.register_parameter("w", torch.ones(1))
    with pytest.raises(AttributeError, match=exact("'Net' object has no attribute 'nothing'")):
        _ = n.nothing
    with pytest.raises(
        NotImplementedError, match=exact('Module [Module] is missing the required "forward" function')
    ):
        nn.Module().forward(1)


def test_reassigning_attributes_moves_them_between_tables():
    n = Net()
    n.fc.bias = None
    assert [k for k, _ in n.fc.named_parameters()] == ["weight"]
    n.scale = torch.full((1,), 2.0)
    assert n.state_dict()["scale"].tolist() == [2.0]
    n.extra = nn.Linear(1, 1)
    assert "extra" in dict(n.named_children())
    del n.extra
    assert "extra" not in dict(n.named_children())


# ------------------------------------------------------------------------- modes and grads


def test_train_eval_propagate():
    n = Net()
    assert n.training and n.bn.training
    assert n.eval() is n and not n.bn.training and not n.fc.training
    n.train()
    assert n.bn.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        n.train("yes")


def test_zero_grad_sets_none_by_default():
    lin = nn.Linear(3, 2)
    lin(torch.ones(4, 3)).sum().backward()
    assert lin.weight.grad is not None
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad.abs().sum().item() == 0 and lin.weight.grad is not None
    lin(torch.ones(4, 3)).sum().backward()
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None


def test_requires_grad_():
    lin = nn.Linear(2, 2)
    assert lin.requires_grad_(False) is lin
    assert not any(p.requires_grad for p in lin.parameters())
    assert lin(torch.ones(1, 2)).grad_fn is None


# ----------------------------------------------------------------------------- conversion


def test_double_float_to_keep_parameter_identity():
    n = Net()
    weight = n.fc.weight
    n(torch.ones(4, 3)).sum().backward()
    assert n.double() is n
    assert n.fc.weight is weight and weight.dtype == torch.float64 and weight.grad.dtype == torch.float64
    assert n.bn.running_mean.dtype == torch.float64
    assert n.bn.num_batches_tracked.dtype == torch.int64  # integer buffers keep their dtype
    n.to(torch.float32)
    assert weight.dtype == torch.float32 and n.scale.dtype == torch.float32
    n.to("cpu")
    assert weight.device == torch.device("cpu")
    out = n.double()(torch.ones(4, 3, dtype=torch.float64))
    assert out.dtype == torch.float64
    with pytest.raises(
        TypeError,
        match=exact(
            f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={NAME}.int64"
        ),
    ):
        nn.Linear(2, 2).to(torch.int64)


# ------------------------------------------------------------------------------ state dict


def test_state_dict_round_trip():
    torch.manual_seed(0)
    a, b = Net(), Net()
    state = a.state_dict()
    assert not state["fc.weight"].requires_grad
    result = b.load_state_dict(state)
    assert repr(result) == "<All keys matched successfully>"
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and va.tolist() == vb.tolist()
    assert b.fc.weight.requires_grad


def test_load_state_dict_errors():
    n = Net()
    with pytest.raises(RuntimeError) as info:
        n.load_state_dict({"fc.weight": torch.zeros(2, 3)})
    assert str(info.value) == (
        "Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "
        '"scale", "fc.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var". '
    )
    result = n.load_state_dict({"fc.weight": torch.zeros(2, 3)}, strict=False)
    assert repr(result) == (
        "_IncompatibleKeys(missing_keys=['scale', 'fc.bias', 'bn.weight', 'bn.bias', 'bn.running_mean', "
        "'bn.running_var'], unexpected_keys=[])"
    )
    assert n.fc.weight.abs().sum().item() == 0
    lin = nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as info:
        lin.load_state_dict({"weight": torch.zeros(3, 3), "bias": torch.zeros(2), "foo": torch.zeros(1)})
    assert str(info.value) == (
        "Error(s) in loading state_dict for Linear:\n"
        '\tUnexpected key(s) in state_dict: "foo". \n'
        f"\tsize mismatch for weight: copying a param with shape {NAME}.Size([3, 3]) from checkpoint, "
        f"the shape in current model is {NAME}.Size([2, 3])."
    )


# ----------------------------------------------------------------------------------- hooks


def test_forward_hooks():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    calls = []
    post = seq.register_forward_hook(lambda m, args, out: calls.append(("post", len(args), tuple(out.shape))))
    pre = seq.register_forward_pre_hook(lambda m, args: calls.append("pre"))
    seq(torch.ones(1, 2))
    post.remove()
    pre.remove()
    seq(torch.ones(1, 2))
    assert calls == ["pre", ("post", 1, (1, 2))]
    seq.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    seq.register_forward_hook(lambda m, args, out: out + 1)
    expected = [[1.0 + max(seq[0].bias[0].item(), 0), 1.0 + max(seq[0].bias[1].item(), 0)]]
    np.testing.assert_allclose(seq(torch.ones(1, 2)).tolist(), expected, rtol=1e-6)


def test_forward_hooks_with_kwargs_and_prepend():
    lin = nn.Linear(2, 2)
    order = []
    lin.register_forward_hook(lambda m, a, o: order.append("a"))
    lin.register_forward_hook(lambda m, a, o: order.append("b"), prepend=True)
    lin.register_forward_pre_hook(lambda m, a, kw: (a, kw), with_kwargs=True)
    lin(torch.ones(1, 2))
    assert order == ["b", "a"]


def test_global_forward_hooks_run_for_every_module_before_its_own():
    module_file = torch.nn.modules.module if NAME == "torch" else torch.nn.module  # where each defines them
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    calls = []
    seq[1].register_forward_hook(lambda m, args, out: calls.append("own"))
    pre = module_file.register_module_forward_pre_hook(
        lambda m, args: calls.append(("pre", type(m).__name__))
    )
    post = module_file.register_module_forward_hook(
        lambda m, args, kwargs, out: calls.append(("post", type(m).__name__, kwargs)), with_kwargs=True
    )
    try:
        seq(torch.ones(1, 2))
    finally:
        pre.remove()
        post.remove()
    seq(torch.ones(1, 2))
    assert calls == [
        ("pre", "Sequential"),
        ("pre", "Linear"),
        ("post", "Linear", {}),
        ("pre", "ReLU"),
        ("post", "ReLU", {}),
        "own",
        ("post", "Sequential", {}),
        "own",
    ]


# ------------------------------------------------------------------------------ containers


def test_sequential_indexing_and_reprs():
    s = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    assert len(s) == 3 and isinstance(s[0], nn.Linear) and s[-1] is s[2]
    assert (
        repr(s[1:])
        == "Sequential(\n  (1): ReLU()\n  (2): Linear(in_features=2, out_features=1, bias=True)\n)"
    )
    assert repr(nn.Sequential()) == "Sequential()"
    nested = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
    assert repr(nested) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): ReLU()\n"
        "    (1): Linear(in_features=3, out_features=1, bias=True)\n"
        "  )\n"
        ")"
    )
    s.append(nn.Sigmoid())
    assert len(s) == 4 and s(torch.ones(5, 2)).shape == (5, 1)


def test_module_list_and_dict_reprs():
    ml = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Linear(2, 2), nn.ReLU()])
    assert repr(ml) == (
        "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Linear(in_features=2, out_features=2, bias=True)\n  (3): ReLU()\n)"
    )
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert len(list(ml.parameters())) == 2
    md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(1, 1)})
    assert (
        repr(md) == "ModuleDict(\n  (a): ReLU()\n  (b): Linear(in_features=1, out_features=1, bias=True)\n)"
    )
    assert list(md) == ["a", "b"]


LAYER_REPRS = [
    (lambda: nn.Linear(3, 4), "Linear(in_features=3, out_features=4, bias=True)"),
    (
        lambda: nn.Conv2d(3, 8, 3, padding=1),
        "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))",
    ),
    (
        lambda: nn.Conv1d(3, 8, 3, stride=2, bias=False),
        "Conv1d(3, 8, kernel_size=(3,), stride=(2,), bias=False)",
    ),
    (
        lambda: nn.Conv1d(2, 4, 3, dilation=2, groups=2, padding_mode="reflect", padding=1),
        "Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,), dilation=(2,), groups=2, padding_mode=reflect)",
    ),
    (
        lambda: nn.Conv2d(3, 8, (3, 5), padding="same", padding_mode="reflect"),
        "Conv2d(3, 8, kernel_size=(3, 5), stride=(1, 1), padding=same, padding_mode=reflect)",
    ),
    (lambda: nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (
        lambda: nn.MaxPool2d(2, 1, 1, ceil_mode=True),
        "MaxPool2d(kernel_size=2, stride=1, padding=1, dilation=1, ceil_mode=True)",
    ),
    (lambda: nn.MaxPool1d(3), "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"),
    (lambda: nn.AvgPool2d(2), "AvgPool2d(kernel_size=2, stride=2, padding=0)"),
    (lambda: nn.AvgPool2d((2, 3), stride=1), "AvgPool2d(kernel_size=(2, 3), stride=1, padding=0)"),
    (lambda: nn.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
    (
        lambda: nn.BatchNorm2d(4),
        "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)",
    ),
    (
        lambda: nn.BatchNorm1d(3, affine=False, track_running_stats=False, momentum=None),
        "BatchNorm1d(3, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=False)",
    ),
    (lambda: nn.LayerNorm(5), "LayerNorm((5,), eps=1e-05, elementwise_affine=True, bias=True)"),
    (
        lambda: nn.LayerNorm([2, 3], elementwise_affine=False),
        "LayerNorm((2, 3), eps=1e-05, elementwise_affine=False, bias=False)",
    ),
    (lambda: nn.Embedding(10, 3, padding_idx=0), "Embedding(10, 3, padding_idx=0)"),
    (lambda: nn.Embedding(5, 2, padding_idx=-1), "Embedding(5, 2, padding_idx=4)"),
    (
        lambda: nn.Embedding(5, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True),
        "Embedding(5, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)",
    ),
    (lambda: nn.Dropout(), "Dropout(p=0.5, inplace=False)"),
    (lambda: nn.Dropout(0.1, True), "Dropout(p=0.1, inplace=True)"),
    (lambda: nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)"),
    (lambda: nn.Unflatten(1, (2, 3)), "Unflatten(dim=1, unflattened_size=(2, 3))"),
    (lambda: nn.ReLU(), "ReLU()"),
    (lambda: nn.ReLU(inplace=True), "ReLU(inplace=True)"),
    (lambda: nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (lambda: nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda: nn.GELU(), "GELU(approximate='none')"),
    (lambda: nn.Tanh(), "Tanh()"),
    (lambda: nn.Sigmoid(), "Sigmoid()"),
    (lambda: nn.Softmax(dim=1), "Softmax(dim=1)"),
    (lambda: nn.Softmax(), "Softmax(dim=None)"),
    (lambda: nn.LogSoftmax(1), "LogSoftmax(dim=1)"),
    (lambda: nn.Identity(3), "Identity()"),
    (lambda: nn.CrossEntropyLoss(), "CrossEntropyLoss()"),
    (lambda: nn.MSELoss(), "MSELoss()"),
    (lambda: nn.L1Loss(), "L1Loss()"),
    (lambda: nn.SmoothL1Loss(), "SmoothL1Loss()"),
    (lambda: nn.NLLLoss(), "NLLLoss()"),
    (lambda: nn.BCELoss(), "BCELoss()"),
    (lambda: nn.BCEWithLogitsLoss(), "BCEWithLogitsLoss()"),
]


@pytest.mark.parametrize("make, expected", LAYER_REPRS, ids=[r for _, r in LAYER_REPRS])
def test_layer_repr(make, expected):
    assert repr(make()) == expected


# ------------------------------------------------------------------------ default inits


def _uniform_bound_ok(t, bound):
    values = np.asarray(t.detach().tolist())
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.8 * bound  # spread over the whole interval, not a narrower one


def test_linear_and_conv_default_init_bounds():
    torch.manual_seed(0)
    lin = nn.Linear(50, 40)
    _uniform_bound_ok(lin.weight, 1 / math.sqrt(50))  # kaiming_uniform_(a=sqrt(5)) == U(-1/sqrt(fan_in), ..)
    _uniform_bound_ok(lin.bias, 1 / math.sqrt(50))
    conv = nn.Conv2d(4, 16, 3)
    _uniform_bound_ok(conv.weight, 1 / math.sqrt(4 * 9))
    _uniform_bound_ok(conv.bias, 1 / math.sqrt(4 * 9))


def test_norm_and_embedding_default_init():
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(3)
    assert bn.weight.tolist() == [1.0] * 3 and bn.bias.tolist() == [0.0] * 3
    assert bn.running_mean.tolist() == [0.0] * 3 and bn.running_var.tolist() == [1.0] * 3
    assert bn.num_batches_tracked.item() == 0 and bn.num_batches_tracked.dtype == torch.int64
    ln = nn.LayerNorm((2, 3))
    assert ln.weight.shape == (2, 3) and ln.weight.sum().item() == 6 and ln.bias.abs().sum().item() == 0
    emb = nn.Embedding(200, 50, padding_idx=3)
    values = np.asarray(emb.weight.detach().tolist())
    assert (values[3] == 0).all()
    assert abs(values.std() - 1) < 0.05 and abs(values.mean()) < 0.05  # N(0, 1)


def test_init_functions():
    torch.manual_seed(0)
    w = torch.empty(300, 200)
    nn.init.xavier_uniform_(w)
    _uniform_bound_ok(w, math.sqrt(6 / 500))
    nn.init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
    _uniform_bound_ok(w, math.sqrt(2.0) * math.sqrt(3 / 300))
    nn.init.uniform_(w, -2, 3)
    values = np.asarray(w.tolist())
    assert values.min() >= -2 and values.max() <= 3 and abs(values.mean() - 0.5) < 0.05
    nn.init.normal_(w, 1.0, 0.5)
    values = np.asarray(w.tolist())
    assert abs(values.mean() - 1.0) < 0.01 and abs(values.std() - 0.5) < 0.01
    assert nn.init.constant_(w, 0.25) is w and np.asarray(w.tolist()).max() == 0.25
    nn.init.zeros_(w)
    assert w.abs().sum().item() == 0
    nn.init.ones_(w)
    assert w.sum().item() == 60000
    assert nn.init.calculate_gain("relu") == math.sqrt(2.0)
    assert nn.init.calculate_gain("tanh") == 5.0 / 3
    assert nn.init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert nn.init.calculate_gain("conv2d") == 1
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        nn.init.calculate_gain("foo")


def test_init_is_in_place_on_parameters_without_graph():
    p = nn.Parameter(torch.zeros(3, 4))
    version = p._version
    nn.init.uniform_(p)
    assert p.grad_fn is None and p.requires_grad and p._version > version


# ------------------------------------------------------------------------------- layers


def test_batch_norm_module_train_and_eval():
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(3, momentum=None)
    x = torch.randn(8, 3, dtype=torch.float64)
    bn.double()
    bn(x)
    bn(x * 2)
    assert bn.num_batches_tracked.item() == 2
    a = np.asarray(x.tolist())
    expected_mean = (a.mean(0) + 2 * a.mean(0)) / 2  # cumulative moving average
    np.testing.assert_allclose(bn.running_mean.tolist(), expected_mean, rtol=1e-12)
    bn.eval()
    out = bn(x)
    var = np.asarray(bn.running_var.tolist())
    np.testing.assert_allclose(out.tolist(), (a - expected_mean) / np.sqrt(var + 1e-5), rtol=1e-10)
    with pytest.raises(ValueError, match=exact("expected 2D or 3D input (got 4D input)")):
        bn(torch.ones(2, 3, 2, 2))
    with pytest.raises(
        ValueError,
        match=exact(
            f"Expected more than 1 value per channel when training, got input size {NAME}.Size([1, 3])"
        ),
    ):
        nn.BatchNorm1d(3)(torch.ones(1, 3))


def test_dropout_module_eval_is_identity():
    d = nn.Dropout(0.5)
    x = torch.ones(10, 10)
    assert d.eval()(x) is x
    assert (d.train()(x) == 0).any()


def test_flatten_unflatten():
    x = torch.randn(2, 3, 4, 5, requires_grad=True)
    y = nn.Flatten()(x)
    assert y.shape == (2, 60) and y.grad_fn.name() == "ViewBackward0"
    assert nn.Unflatten(1, (3, 20))(y).shape == (2, 3, 20)


def test_conv_padding_modes():
    torch.manual_seed(0)
    conv = nn.Conv2d(2, 3, 3, padding=1, padding_mode="replicate").double()
    x = torch.randn(1, 2, 4, 4, dtype=torch.float64)
    expected = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), conv.weight, conv.bias)
    assert torch.allclose(conv(x), expected)
    same = nn.Conv2d(2, 2, 3, padding="same", padding_mode="reflect")
    assert same(torch.randn(1, 2, 5, 5)).shape == (1, 2, 5, 5)
