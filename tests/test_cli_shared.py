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
