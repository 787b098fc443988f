"""The named results of multi-output ops (engine.return_types): torch's names, fields and printing."""

import pytest

import engine

VALUES = [[1.0, 5.0, 3.0], [2.0, 4.0, 7.0]]

RESULTS = [
    ("max", lambda lib, x: lib.max(x, 1)),
    ("min", lambda lib, x: x.min(0)),
    ("sort", lambda lib, x: x.sort(1)),
    ("topk", lambda lib, x: x.topk(2)),
    ("kthvalue", lambda lib, x: x.kthvalue(2, 1)),
    ("mode", lambda lib, x: x.mode(1)),
    ("median", lambda lib, x: x.median(1)),
    ("nanmedian", lambda lib, x: x.nanmedian(0)),
    ("aminmax", lambda lib, x: lib.aminmax(x, dim=1)),
    ("cummax", lambda lib, x: x.cummax(1)),
    ("cummin", lambda lib, x: x.cummin(0)),
    ("slogdet", lambda lib, x: lib.slogdet(x[:, :2])),
    ("linalg_slogdet", lambda lib, x: lib.linalg.slogdet(x[:, :2])),
    ("linalg_qr", lambda lib, x: lib.linalg.qr(x)),
    ("qr", lambda lib, x: lib.qr(x)),
    ("linalg_eigh", lambda lib, x: lib.linalg.eigh(x[:, :2] @ x[:, :2].mT)),
]


@pytest.mark.filterwarnings("ignore:.*qr is deprecated")
@pytest.mark.parametrize("name, call", RESULTS, ids=[name for name, _ in RESULTS])
def test_results_print_as_torchs(torch, name, call):
    ours, theirs = call(engine, engine.tensor(VALUES)), call(torch, torch.tensor(VALUES))
    assert type(ours).__name__ == type(theirs).__name__ == name
    assert type(ours) is getattr(engine.return_types, name)
    assert repr(ours) == repr(theirs).replace("torch.return_types.", "engine.return_types.")


def test_results_index_unpack_and_name_their_fields():
    result = engine.max(engine.tensor(VALUES), 1)
    values, indices = result
    assert isinstance(result, tuple) and len(result) == 2
    assert result[0] is values and result.values is values and result.indices is indices
    assert result._fields == ("values", "indices") and indices.tolist() == [1, 2]
    assert str(result).startswith("engine.return_types.max(\nvalues=tensor([5., 7.]),\nindices=")
