"""The CLI's shared pieces: counted nouns, JSON numbers, exit codes, running a file, the user-frame rule."""

from __future__ import annotations

from gradcli.plurals import noun, plural


def test_plural_counts_and_irregular_forms():
    assert plural(1, "case") == "1 case"
    assert plural(3, "case") == "3 cases"
    assert plural(0, "error") == "0 errors"
    assert plural(1, "leaf", "leaves") == "1 leaf" and plural(2, "leaf", "leaves") == "2 leaves"
    assert plural(12345, "node", thousands=True) == "12,345 nodes"
    assert plural(1000, "node") == "1000 nodes"
    assert noun(1, "was", "were") == "was" and noun(4, "was", "were") == "were"
    assert noun(2, "gradient") == "gradients"


def test_pair_result_carries_every_field_of_the_engines_pair_report():
    import dataclasses

    from engine.autograd.gradcheck.report import PairReport
    from gradcli.checking import Mismatch, PairResult

    report = PairReport(
        output_index=1,
        input_index=0,
        input_shape=(2,),
        output_shape=(3,),
        jacobian_shape=(3, 2),
        max_abs_err=0.5,
        max_rel_err=float("inf"),
        worst_input_index=(1,),
        worst_output_index=(2,),
        numerical=0.0,
        analytical=0.5,
        mismatches=[((2,), (1,), 0.0, 0.5)],
        passed=False,
        order=2,
    )
    pair = PairResult.named(report, "x", "out1")
    assert (pair.input, pair.output) == ("x", "out1")
    assert pair.mismatches == [Mismatch((2,), (1,), 0.0, 0.5)]
    for f in dataclasses.fields(report):
        if f.name != "mismatches":
            assert getattr(pair, f.name) == getattr(report, f.name), f.name


def test_json_numbers_that_are_not_finite_become_strings_everywhere():
    from gradcli.render.jsonable import finite, finite_all

    assert [finite(v) for v in (float("nan"), float("inf"), float("-inf"))] == ["nan", "inf", "-inf"]
    assert finite(1.5) == 1.5 and finite(None) is None and finite("inf") == "inf" and finite(7) == 7
    nested = {"a": [1.0, (float("inf"), 2)], "b": {"c": float("-inf")}, "d": (3, 4)}
    assert finite_all(nested) == {"a": [1.0, ["inf", 2]], "b": {"c": "-inf"}, "d": [3, 4]}


def test_as_json_is_asdict_in_field_order_without_the_left_out_keys():
    import json
    from dataclasses import dataclass, field

    from gradcli.render.jsonable import as_json

    @dataclass
    class Inner:
        value: float
        source: str = "hidden"

    @dataclass
    class Outer:
        name: str
        shape: tuple
        inner: list[Inner] = field(default_factory=list)
        source: str = "hidden"

    data = as_json(Outer("x", (2, 3), [Inner(float("nan")), Inner(0.5)]), leave_out={"source"})
    assert list(data) == ["name", "shape", "inner"]
    assert data == {"name": "x", "shape": [2, 3], "inner": [{"value": "nan"}, {"value": 0.5}]}
    json.dumps(data, allow_nan=False)  # valid JSON: no NaN literal left
