"""Registry entries of reductions and scans: sum, mean, var, std, prod, cumulative ops, extremes, norms,
medians and modes, counts."""

import numpy as np

from ops.opinfo import NUMPY, OpInfo, Sample
from ops.support import D34, D234, DS, I34, R34, R234, S, inf, nan, values, with_nan, zeros_every

OPS = [
    OpInfo(
        "sum",
        [
            Sample("", lambda lib, x: x.sum(), [R34], squared=True, ref=NUMPY),
            Sample("func", lambda lib, x: lib.sum(x), [R34], ref=np.sum, squared=True),
            Sample("dim1", lambda lib, x: x.sum(1), [R34], squared=True, ref=NUMPY),
            Sample("dim_kw", lambda lib, x: x.sum(dim=0), [R34], ref=lambda x: x.sum(axis=0), squared=True),
            Sample(
                "keepdim",
                lambda lib, x: x.sum(1, keepdim=True),
                [R34],
                ref=lambda x: x.sum(1, keepdims=True),
                squared=True,
            ),
            Sample("negdim", lambda lib, x: x.sum(-1), [("r", (2, 3, 4))], squared=True, ref=NUMPY),
            Sample("tuple", lambda lib, x: x.sum((0, 2)), [("r", (2, 3, 4))], squared=True, ref=NUMPY),
            Sample(
                "tuple_neg_keepdim",
                lambda lib, x: x.sum(dim=(0, -1), keepdim=True),
                [("r", (2, 3, 4))],
                ref=lambda x: x.sum((0, -1), keepdims=True),
                squared=True,
            ),
            Sample("0d", lambda lib, x: x.sum(), [("r", ())], squared=True, ref=NUMPY),
            Sample("empty_dims", lambda lib, x: x.sum(()), [R34], node="SumBackward1"),
            Sample(
                "none_keepdim",
                lambda lib, x: x.sum(None, keepdim=True),
                [R34],
                node="SumBackward1",
            ),
            Sample("dim_0d", lambda lib, x: x.sum(0), [S], node="SumBackward1"),
            Sample(
                "0d_list",
                lambda lib, x: lib.sum(x, [-1], keepdim=True),
                [S],
                node="SumBackward1",
            ),
            Sample("axis", lambda lib, x: x.sum(axis=1), [R34], node="SumBackward1"),
            Sample("input_kw", lambda lib, x: lib.sum(input=x), [R34], node="SumBackward0"),
            Sample("uint8", lambda lib, x: x.to(lib.uint8).sum(0), [("int", (3, 4))]),
            Sample("int_dtype", lambda lib, x: x.sum(1, dtype=lib.float32), [I34]),
        ],
    ),
    OpInfo(
        "mean",
        [
            Sample("", lambda lib, x: x.mean(), [R34], squared=True, ref=NUMPY),
            Sample("func", lambda lib, x: lib.mean(x), [R34], ref=np.mean, squared=True),
            Sample("dim0", lambda lib, x: x.mean(0), [R34], squared=True, ref=NUMPY),
            Sample(
                "keepdim",
                lambda lib, x: x.mean(-1, keepdim=True),
                [R34],
                ref=lambda x: x.mean(-1, keepdims=True),
                squared=True,
            ),
            Sample("tuple", lambda lib, x: x.mean((1, 2)), [("r", (2, 3, 4))], squared=True, ref=NUMPY),
            Sample(
                "tuple_neg_keepdim",
                lambda lib, x: x.mean(dim=(-3, -1), keepdim=True),
                [("r", (2, 3, 4))],
                ref=lambda x: x.mean((0, 2), keepdims=True),
                squared=True,
            ),
            Sample("empty_dims", lambda lib, x: x.mean(()), [R34], node="MeanBackward1"),
            Sample(
                "none_keepdim",
                lambda lib, x: lib.mean(x, None, True),
                [R34],
                node="MeanBackward1",
            ),
            Sample("0d", lambda lib, x: x.mean(-1), [S], node="MeanBackward1"),
            Sample("int_dtype", lambda lib, x: x.mean(dtype=lib.float64), [I34]),
        ],
    ),
    OpInfo(
        "var",
        [
            Sample("", lambda lib, x: x.var(), [R34], ref=lambda x: x.var(ddof=1), squared=True),
            Sample("dim", lambda lib, x: x.var(1), [R34], ref=lambda x: x.var(1, ddof=1), squared=True),
            Sample(
                "negdim_keepdim",
                lambda lib, x: x.var(-2, keepdim=True),
                [R34],
                ref=lambda x: x.var(0, ddof=1, keepdims=True),
                squared=True,
            ),
            Sample(
                "unbiased_false",
                lambda lib, x: x.var(unbiased=False),
                [R34],
                ref=lambda x: x.var(),
                squared=True,
            ),
            Sample(
                "dim_unbiased_false",
                lambda lib, x: x.var(0, unbiased=False),
                [R34],
                ref=lambda x: x.var(0),
                squared=True,
            ),
            Sample(
                "correction0",
                lambda lib, x: x.var(dim=1, correction=0),
                [R34],
                ref=lambda x: x.var(1),
                squared=True,
            ),
            Sample("func", lambda lib, x: lib.var(x, 1), [R34], ref=lambda x: x.var(1, ddof=1), squared=True),
            Sample("0d", lambda lib, x: x.var(0, correction=0), [S], node="VarBackward0"),
            Sample("empty_dims", lambda lib, x: x.var(()), [R34], node="VarBackward0", grad=False),
            Sample("axis", lambda lib, x: x.var(axis=1, keepdim=True), [R34], node="VarBackward0"),
        ],
    ),
    OpInfo(
        "std",
        [
            Sample("", lambda lib, x: x.std(), [R34], ref=lambda x: x.std(ddof=1), squared=True),
            Sample("dim", lambda lib, x: x.std(0), [R34], ref=lambda x: x.std(0, ddof=1), squared=True),
            Sample(
                "negdim_keepdim",
                lambda lib, x: x.std(-1, keepdim=True),
                [R34],
                ref=lambda x: x.std(1, ddof=1, keepdims=True),
                squared=True,
            ),
            Sample(
                "unbiased_false",
                lambda lib, x: x.std(1, unbiased=False),
                [R34],
                ref=lambda x: x.std(1),
                squared=True,
            ),
            Sample(
                "correction0", lambda lib, x: x.std(correction=0), [R34], ref=lambda x: x.std(), squared=True
            ),
            Sample("func", lambda lib, x: lib.std(x), [R34], ref=lambda x: x.std(ddof=1), squared=True),
        ],
    ),
    OpInfo(
        "max",
        [
            Sample("full", lambda lib, x: x.max(), [D34], ref=np.max, squared=True),
            Sample("full_func", lambda lib, x: lib.max(x), [D34], ref=np.max, squared=True),
            Sample("dim", lambda lib, x: x.max(1)[0], [D34], ref=lambda x: x.max(1), squared=True),
            Sample(
                "dim_values", lambda lib, x: x.max(dim=0).values, [D34], ref=lambda x: x.max(0), squared=True
            ),
            Sample(
                "dim_keepdim",
                lambda lib, x: x.max(-1, keepdim=True)[0],
                [D34],
                ref=lambda x: x.max(-1, keepdims=True),
                squared=True,
            ),
            Sample("dim_func", lambda lib, x: lib.max(x, 1)[0], [D34], ref=lambda x: x.max(1), squared=True),
            Sample("binary", lambda lib, x, y: lib.max(x, y), [D34, D34], ref=np.maximum, squared=True),
            Sample("other_kw", lambda lib, x, y: x.max(other=y), [D34, D34], ref=np.maximum, squared=True),
            Sample("0d", lambda lib, x: x.max(0), [DS], node="MaxBackward0"),
            Sample(
                "ties",
                lambda lib, x: x.max(),
                [(values(1, 3, 3, 2), (2, 2))],
                node="MaxBackward1",
                gradgrad=False,
            ),
        ],
    ),
    OpInfo(
        "min",
        [
            Sample("full", lambda lib, x: x.min(), [D34], ref=np.min, squared=True),
            Sample("dim", lambda lib, x: x.min(0)[0], [D34], ref=lambda x: x.min(0), squared=True),
            Sample(
                "dim_values",
                lambda lib, x: x.min(dim=-1).values,
                [D34],
                ref=lambda x: x.min(-1),
                squared=True,
            ),
            Sample(
                "dim_keepdim",
                lambda lib, x: x.min(0, keepdim=True)[0],
                [D34],
                ref=lambda x: x.min(0, keepdims=True),
                squared=True,
            ),
            Sample("binary_method", lambda lib, x, y: x.min(y), [D34, D34], ref=np.minimum, squared=True),
            Sample("0d", lambda lib, x: lib.min(x, -1, True), [DS], node="MinBackward0"),
        ],
    ),
    OpInfo(
        "norm",
        [
            Sample("", lambda lib, x: x.norm(), [R34], ref=np.linalg.norm, squared=True),
            Sample("func", lambda lib, x: lib.norm(x), [R34], ref=np.linalg.norm, squared=True),
            Sample(
                "dim", lambda lib, x: x.norm(dim=1), [R34], ref=lambda x: np.sqrt((x**2).sum(1)), squared=True
            ),
            Sample(
                "p2_dim",
                lambda lib, x: x.norm(2, dim=0),
                [R34],
                ref=lambda x: np.sqrt((x**2).sum(0)),
                squared=True,
            ),
            Sample(
                "negdim_keepdim",
                lambda lib, x: x.norm(dim=-1, keepdim=True),
                [R34],
                ref=lambda x: np.sqrt((x**2).sum(-1, keepdims=True)),
                squared=True,
            ),
            Sample("distinct", lambda lib, x: x.norm(), [D34], node="LinalgVectorNormBackward0"),
            *[
                Sample(
                    f"p{p}",
                    lambda lib, x, p=p: x.norm(p),
                    [D34],
                    node="LinalgVectorNormBackward0",
                )
                for p in (inf, -inf, 0, 1, 3, 0.5, -1, None)
            ],
            Sample(
                "fro_dim",
                lambda lib, x: lib.norm(x, "fro", dim=1),
                [D34],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "fro_dims",
                lambda lib, x: x.norm("fro", dim=(0, 1), keepdim=True),
                [D234],
                node="LinalgVectorNormBackward0",
            ),
            Sample("fro_3d", lambda lib, x: x.norm("fro"), [D234], node="LinalgVectorNormBackward0"),
            Sample(
                "inf_dim",
                lambda lib, x: x.norm(inf, dim=-1, keepdim=True),
                [D34],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "p_dims",
                lambda lib, x: lib.norm(x, p=1, dim=(0, 2)),
                [D234],
                node="LinalgVectorNormBackward0",
            ),
            Sample("0d", lambda lib, x: x.norm(dim=0), [DS], node="LinalgVectorNormBackward0"),
        ],
    ),
    OpInfo(
        "prod",
        [
            Sample("", lambda lib, x: x.prod(), [R34], node="ProdBackward0"),
            Sample("func", lambda lib, x: lib.prod(x), [R234], node="ProdBackward0"),
            Sample("dim", lambda lib, x: x.prod(1), [R34], node="ProdBackward1"),
            Sample(
                "neg_keepdim",
                lambda lib, x: lib.prod(x, -1, keepdim=True),
                [R234],
                node="ProdBackward1",
            ),
            Sample("kw", lambda lib, x: lib.prod(input=x, dim=0), [R34], node="ProdBackward1"),
            Sample("axis", lambda lib, x: x.prod(axis=0), [R34], node="ProdBackward1"),
            Sample("0d", lambda lib, x: x.prod(0), [S], node="ProdBackward1"),
            Sample("0d_keepdim", lambda lib, x: x.prod(-1, True), [S], node="ProdBackward1"),
            Sample(
                "one_zero",
                lambda lib, x: x.prod(),
                [(zeros_every(12), (3, 4))],
                node="ProdBackward0",
            ),
            Sample(
                "two_zeros",
                lambda lib, x: x.prod(),
                [(zeros_every(5), (3, 4))],
                node="ProdBackward0",
            ),
            Sample(
                "dim_zeros",
                lambda lib, x: x.prod(1),
                [(zeros_every(3), (3, 4))],
                node="ProdBackward1",
            ),
            Sample(
                "dim0_zeros",
                lambda lib, x: x.prod(0, True),
                [(zeros_every(5), (3, 4))],
                node="ProdBackward1",
            ),
            Sample("int", lambda lib, x: x.prod(1), [I34]),
            Sample("bool", lambda lib, x: x.prod(), [("bool", (3, 4))]),
            Sample("int_dtype", lambda lib, x: x.prod(dtype=lib.float64), [I34]),
        ],
    ),
    OpInfo(
        "cumsum",
        [
            Sample("", lambda lib, x: x.cumsum(1), [R34], node="CumsumBackward0"),
            Sample("dim0", lambda lib, x: lib.cumsum(x, 0), [R234], node="CumsumBackward0"),
            Sample("neg_kw", lambda lib, x: lib.cumsum(x, dim=-2), [R234], node="CumsumBackward0"),
            Sample("0d", lambda lib, x: x.cumsum(0), [S], node="CumsumBackward0"),
            Sample("int", lambda lib, x: x.cumsum(0), [I34]),
            Sample("bool", lambda lib, x: x.cumsum(1), [("bool", (3, 4))]),
            Sample("int32", lambda lib, x: x.int().cumsum(1), [I34]),
            Sample("int_dtype", lambda lib, x: x.cumsum(1, dtype=lib.float64), [I34]),
            Sample("dtype_int32", lambda lib, x: x.cumsum(1, dtype=lib.int32), [I34]),
        ],
    ),
    OpInfo(
        "cumprod",
        [
            Sample("", lambda lib, x: x.cumprod(1), [R34], node="CumprodBackward0"),
            Sample("dim0", lambda lib, x: lib.cumprod(x, 0), [R234], node="CumprodBackward0"),
            Sample("0d", lambda lib, x: x.cumprod(-1), [S], node="CumprodBackward0"),
            Sample(
                "zeros",
                lambda lib, x: x.cumprod(1),
                [(zeros_every(3), (3, 5))],
                node="CumprodBackward0",
            ),
            Sample(
                "zeros_dim0",
                lambda lib, x: x.cumprod(0),
                [(zeros_every(4), (5, 3))],
                node="CumprodBackward0",
            ),
            Sample("int", lambda lib, x: x.cumprod(1), [I34]),
        ],
    ),
    OpInfo(
        "cummax",
        [
            Sample("", lambda lib, x: x.cummax(1), [D34], node="CummaxBackward0"),
            Sample("dim0", lambda lib, x: lib.cummax(x, dim=0), [D234], node="CummaxBackward0"),
            Sample("0d", lambda lib, x: x.cummax(0), [DS], node="CummaxBackward0"),
            Sample("int", lambda lib, x: x.cummax(1), [I34]),
        ],
    ),
    OpInfo(
        "cummin",
        [
            Sample("", lambda lib, x: x.cummin(-1), [D234], node="CumminBackward0"),
            Sample("values", lambda lib, x: lib.cummin(x, 0).values, [D34], node="CumminBackward0"),
            Sample("0d", lambda lib, x: x.cummin(-1), [DS], node="CumminBackward0"),
            Sample("bool", lambda lib, x: x.cummin(1), [("bool", (3, 4))]),
        ],
    ),
    OpInfo(
        "logcumsumexp",
        [
            Sample("", lambda lib, x: x.logcumsumexp(1), [R34], node="LogcumsumexpBackward0"),
            Sample(
                "dim0",
                lambda lib, x: lib.logcumsumexp(x, 0),
                [R234],
                node="LogcumsumexpBackward0",
            ),
            Sample("0d", lambda lib, x: x.logcumsumexp(0), [S], node="LogcumsumexpBackward0"),
            Sample(
                "long",
                lambda lib, x: x.logcumsumexp(0),
                [("r", (9,))],
                node="LogcumsumexpBackward0",
            ),
        ],
    ),
    OpInfo(
        "logsumexp",
        [
            Sample("", lambda lib, x: x.logsumexp(1), [R34], node="LogsumexpBackward0"),
            Sample(
                "tuple",
                lambda lib, x: lib.logsumexp(x, (0, 2)),
                [R234],
                node="LogsumexpBackward0",
            ),
            Sample(
                "list_keepdim",
                lambda lib, x: x.logsumexp([-1, 0], keepdim=True),
                [R234],
                node="LogsumexpBackward0",
            ),
            Sample("axis", lambda lib, x: x.logsumexp(axis=0), [R34], node="LogsumexpBackward0"),
            Sample("0d", lambda lib, x: x.logsumexp(0), [S], node="LogsumexpBackward0"),
            Sample("0d_empty_dims", lambda lib, x: x.logsumexp(()), [S], node="LogsumexpBackward0"),
            Sample("int", lambda lib, x: x.logsumexp(1), [I34]),
            Sample("bool", lambda lib, x: lib.logsumexp(x, 0), [("bool", (3, 4))]),
        ],
    ),
    OpInfo(
        "amax",
        [
            Sample("", lambda lib, x: x.amax(), [D34], node="AmaxBackward0"),
            Sample("dim", lambda lib, x: x.amax(1), [D34], node="AmaxBackward0"),
            Sample(
                "tuple_keepdim",
                lambda lib, x: lib.amax(x, (0, -1), keepdim=True),
                [D234],
                node="AmaxBackward0",
            ),
            Sample("empty_dims", lambda lib, x: x.amax(()), [D34], node="AmaxBackward0"),
            Sample("0d", lambda lib, x: x.amax(0), [DS], node="AmaxBackward0"),
            Sample(
                "ties",
                lambda lib, x: x.amax(1),
                [(values(1, 3, 3, 2, 5, 5, 4, 0), (2, 4))],
                node="AmaxBackward0",
                gradgrad=False,
            ),
            Sample("int", lambda lib, x: x.amax(1), [I34]),
            Sample("bool", lambda lib, x: x.amax(), [("bool", (3, 4))]),
        ],
    ),
    OpInfo(
        "amin",
        [
            Sample("", lambda lib, x: lib.amin(x), [D34], node="AminBackward0"),
            Sample("list", lambda lib, x: x.amin([1, 2]), [D234], node="AminBackward0"),
            Sample(
                "axis",
                lambda lib, x: x.amin(axis=-1, keepdim=True),
                [D34],
                node="AminBackward0",
            ),
            Sample("0d", lambda lib, x: x.amin(-1), [DS], node="AminBackward0"),
            Sample(
                "ties_all",
                lambda lib, x: x.amin(),
                [(values(1, 3, 1, 2), (2, 2))],
                node="AminBackward0",
                gradgrad=False,
            ),
        ],
    ),
    OpInfo(
        "aminmax",
        [
            Sample("", lambda lib, x: lib.aminmax(x), [D34], node="AminmaxBackward0"),
            Sample("dim", lambda lib, x: lib.aminmax(x, dim=1), [D34], node="AminmaxBackward0"),
            Sample(
                "dim_keepdim",
                lambda lib, x: x.aminmax(dim=-1, keepdim=True),
                [D234],
                node="AminmaxBackward0",
            ),
            Sample(
                "keepdim",
                lambda lib, x: lib.aminmax(x, keepdim=True),
                [D34],
                node="AminmaxBackward0",
            ),
            Sample("0d", lambda lib, x: lib.aminmax(x, dim=0), [DS], node="AminmaxBackward0"),
            Sample("max", lambda lib, x: lib.aminmax(x, dim=0).max, [D34], node="AminmaxBackward0"),
            Sample(
                "both",
                lambda lib, x: (lambda r: r.min * 2 + r.max)(lib.aminmax(x, dim=1)),
                [D34],
            ),
            Sample("int", lambda lib, x: lib.aminmax(x), [I34]),
        ],
    ),
    OpInfo(
        "var_mean",
        [
            Sample("", lambda lib, x: lib.var_mean(x), [R34], node="VarMeanBackward0"),
            Sample("dim", lambda lib, x: lib.var_mean(x, 1), [R34], node="VarMeanBackward0"),
            Sample("mean", lambda lib, x: lib.var_mean(x, 1)[1], [R34], node="VarMeanBackward0"),
            Sample(
                "both",
                lambda lib, x: (lambda r: r[0] * 3 + r[1])(lib.var_mean(x, (0, 2), keepdim=True)),
                [R234],
            ),
            Sample(
                "unbiased",
                lambda lib, x: lib.var_mean(x, 1, False),
                [R34],
                node="VarMeanBackward0",
            ),
            Sample(
                "unbiased_only",
                lambda lib, x: lib.var_mean(x, False),
                [R34],
                node="VarMeanBackward0",
            ),
            Sample(
                "correction",
                lambda lib, x: lib.var_mean(x, dim=[0, 1], correction=2),
                [R34],
                node="VarMeanBackward0",
            ),
            Sample("axis", lambda lib, x: lib.var_mean(x, axis=-1), [R34], node="VarMeanBackward0"),
            Sample(
                "0d",
                lambda lib, x: lib.var_mean(x, 0, correction=0),
                [S],
                node="VarMeanBackward0",
            ),
        ],
    ),
    OpInfo(
        "std_mean",
        [
            Sample("", lambda lib, x: lib.std_mean(x), [R34], node="StdMeanBackward0"),
            Sample(
                "both",
                lambda lib, x: (lambda r: r[0] * 3 + r[1])(lib.std_mean(x, -1, keepdim=True)),
                [R234],
            ),
            Sample("mean", lambda lib, x: lib.std_mean(x, [0])[1], [R34], node="StdMeanBackward0"),
            Sample(
                "correction",
                lambda lib, x: lib.std_mean(x, 0, correction=0),
                [R34],
                node="StdMeanBackward0",
            ),
        ],
    ),
    OpInfo(
        "median",
        [
            Sample("odd", lambda lib, x: x.median(), [("d", (3, 5))], node="MedianBackward0"),
            Sample("even", lambda lib, x: lib.median(x), [D34], node="MedianBackward0"),
            Sample("dim", lambda lib, x: x.median(1), [D34], node="MedianBackward1"),
            Sample(
                "dim0_keepdim",
                lambda lib, x: lib.median(x, 0, keepdim=True),
                [D234],
                node="MedianBackward1",
            ),
            Sample("neg", lambda lib, x: x.median(dim=-1).values, [D234], node="MedianBackward1"),
            Sample("0d", lambda lib, x: x.median(0), [DS], node="MedianBackward1"),
            Sample("int", lambda lib, x: x.median(), [I34]),
            Sample("int_dim", lambda lib, x: x.median(1, True), [I34]),
        ],
    ),
    OpInfo(
        "nanmedian",
        [
            Sample(
                "",
                lambda lib, x: x.nanmedian(),
                [(with_nan, (3, 5))],
                node="NanmedianBackward0",
            ),
            Sample(
                "dim",
                lambda lib, x: lib.nanmedian(x, 1),
                [(with_nan, (3, 5))],
                node="NanmedianBackward1",
            ),
            Sample("plain", lambda lib, x: x.nanmedian(0), [D34], node="NanmedianBackward1"),
        ],
    ),
    OpInfo(
        "mode",
        [
            Sample("", lambda lib, x: x.mode(), [D34], node="ModeBackward0"),
            Sample(
                "dim0",
                lambda lib, x: lib.mode(x, 0, keepdim=True),
                [D234],
                node="ModeBackward0",
            ),
            Sample("0d", lambda lib, x: x.mode(), [DS], node="ModeBackward0"),
            Sample("int", lambda lib, x: x.mode(1), [("int", (4, 9))]),
            Sample("int_dim0", lambda lib, x: x.mode(0, True), [("int", (9, 4))]),
            Sample("bool", lambda lib, x: lib.mode(x), [("bool", (3, 4))]),
        ],
    ),
    OpInfo(
        "nansum",
        [
            Sample("", lambda lib, x: x.nansum(), [(with_nan, (3, 4))], node="NansumBackward0"),
            Sample(
                "dim",
                lambda lib, x: lib.nansum(x, 1, keepdim=True),
                [(with_nan, (3, 4))],
                node="NansumBackward0",
            ),
            Sample(
                "tuple",
                lambda lib, x: x.nansum((0, -1)),
                [(with_nan, (2, 3, 4))],
                node="NansumBackward0",
            ),
            Sample("0d", lambda lib, x: x.nansum(0), [S], node="NansumBackward0"),
            Sample("int", lambda lib, x: x.nansum(0), [I34]),
            Sample("int_dtype", lambda lib, x: x.nansum(dtype=lib.float32), [I34]),
        ],
    ),
    OpInfo(
        "nanmean",
        [
            Sample("", lambda lib, x: x.nanmean(), [(with_nan, (3, 4))], node="DivBackward0"),
            Sample(
                "dim",
                lambda lib, x: lib.nanmean(x, 1),
                [(with_nan, (3, 4))],
                node="DivBackward0",
            ),
            Sample(
                "keepdim",
                lambda lib, x: x.nanmean((0, 1), keepdim=True),
                [(with_nan, (3, 4))],
                node="DivBackward0",
            ),
            Sample("0d", lambda lib, x: x.nanmean(0), [S], node="DivBackward0"),
        ],
    ),
    OpInfo(
        "count_nonzero",
        [
            Sample("", lambda lib, x: lib.count_nonzero(x), [I34]),
            Sample("dim", lambda lib, x: x.count_nonzero(-1), [I34]),
            Sample("tuple", lambda lib, x: x.count_nonzero(dim=(0, 1)), [I34]),
            Sample(
                "float",
                lambda lib, x: x.count_nonzero(0),
                [(zeros_every(3), (3, 4))],
                grad=False,
            ),
            Sample("bool", lambda lib, x: x.count_nonzero(), [("bool", (3, 4))]),
            Sample("0d", lambda lib, x: x.count_nonzero(0), [S], grad=False),
        ],
    ),
    OpInfo(
        "linalg.vector_norm",
        [
            *[
                Sample(
                    f"{o}",
                    lambda lib, x, o=o: lib.linalg.vector_norm(x, o),
                    [D34],
                    node="LinalgVectorNormBackward0",
                )
                for o in (2, 1, 0, inf, -inf, 3, 1.5, 0.5, -1, -2.5)
            ],
            *[
                Sample(
                    f"{o}_dim",
                    lambda lib, x, o=o: lib.linalg.vector_norm(x, o, dim=1),
                    [D34],
                    node="LinalgVectorNormBackward0",
                )
                for o in (2, 1, 0, inf, -inf, 4, 1.5, 0.5, -1)
            ],
            Sample(
                "kw",
                lambda lib, x: lib.linalg.vector_norm(x, ord=3, dim=(0, 2), keepdim=True),
                [D234],
            ),
            Sample(
                "empty_dims",
                lambda lib, x: lib.linalg.vector_norm(x, 2, ()),
                [D34],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "0d",
                lambda lib, x: lib.linalg.vector_norm(x, dim=0),
                [DS],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "0d_inf",
                lambda lib, x: lib.linalg.vector_norm(x, inf, -1),
                [DS],
                node="LinalgVectorNormBackward0",
            ),
        ],
    ),
    OpInfo(
        "linalg.norm",
        [
            Sample(
                "vector",
                lambda lib, x: lib.linalg.norm(x),
                [("d", (5,))],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "flat",
                lambda lib, x: lib.linalg.norm(x),
                [D234],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "ord_1d",
                lambda lib, x: lib.linalg.norm(x, inf),
                [("d", (5,))],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "ord_dim",
                lambda lib, x: lib.linalg.norm(x, 3, dim=1),
                [D34],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "ord_dim0",
                lambda lib, x: lib.linalg.norm(x, 0, -1),
                [D34],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "fro_dims",
                lambda lib, x: lib.linalg.norm(x, "fro", (0, 2)),
                [D234],
                node="LinalgVectorNormBackward0",
            ),
            Sample(
                "matrix_fro",
                lambda lib, x: lib.linalg.norm(x, "fro"),
                [D34],
                node="LinalgVectorNormBackward0",
            ),
            Sample("two_dims", lambda lib, x: lib.linalg.norm(x, None, (0, 1), True), [D34]),
            Sample("0d", lambda lib, x: lib.linalg.norm(x), [DS], node="LinalgVectorNormBackward0"),
        ],
    ),
    OpInfo(
        "dist",
        [
            Sample("", lambda lib, x, y: lib.dist(x, y), [D34, R34], node="DistBackward0"),
            *[
                Sample(
                    f"p{p}",
                    lambda lib, x, y, p=p: x.dist(y, p),
                    [D34, R34],
                    node="DistBackward0",
                )
                for p in (1, inf, -inf, 3, 0.5, -1)
            ],
            Sample(
                "p0",
                lambda lib, x, y: x.dist(y, 0),
                [D34, R34],
                node="DistBackward0",
                grad=False,
            ),
            Sample(
                "broadcast",
                lambda lib, x, y: lib.dist(x, y),
                [D34, ("r", (4,))],
                node="DistBackward0",
            ),
            Sample(
                "broadcast_p1",
                lambda lib, x, y: lib.dist(x, y, p=1),
                [("d", (3, 1)), ("r", (2, 1, 4))],
                node="DistBackward0",
            ),
            Sample("0d", lambda lib, x, y: lib.dist(x, y), [DS, S], node="DistBackward0"),
            Sample("promotes", lambda lib, x, y: lib.dist(x, y), [D34, I34], node="DistBackward0"),
        ],
    ),
    OpInfo(
        "argmax",
        [
            Sample("keepdim", lambda lib, x: x.argmax(keepdim=True), [D34], grad=False),
            Sample("0d", lambda lib, x: x.argmax(0), [DS], grad=False),
            Sample("nan", lambda lib, x: x.argmax(), [(values(1, nan, 3, nan), (4,))], grad=False),
        ],
    ),
    OpInfo(
        "argmin",
        [
            Sample("dim", lambda lib, x: lib.argmin(x, -1, True), [D234], grad=False),
            Sample("0d_keepdim", lambda lib, x: x.argmin(-1, keepdim=True), [DS], grad=False),
            Sample("int_axis", lambda lib, x: x.argmin(axis=0), [I34]),
        ],
    ),
    OpInfo(
        "all",
        [
            Sample("", lambda lib, x: x.all(), [(zeros_every(5), (3, 4))], grad=False),
            Sample(
                "dim_keepdim",
                lambda lib, x: lib.all(x, 1, keepdim=True),
                [(zeros_every(5), (3, 4))],
                grad=False,
            ),
            Sample(
                "tuple",
                lambda lib, x: x.all((0, -1)),
                [(zeros_every(7), (2, 3, 4))],
                grad=False,
            ),
            Sample("none_keepdim", lambda lib, x: x.all(None, True), [I34]),
            Sample("empty_dims", lambda lib, x: x.all(()), [I34]),
            Sample("uint8", lambda lib, x: x.to(lib.uint8).all(1), [I34]),
        ],
    ),
    OpInfo(
        "any",
        [
            Sample("", lambda lib, x: lib.any(x, dim=0), [(zeros_every(2), (3, 4))], grad=False),
            Sample("uint8", lambda lib, x: x.to(lib.uint8).any(), [I34]),
            Sample("0d", lambda lib, x: x.any(0), [S], grad=False),
            Sample("axis_list", lambda lib, x: x.any(axis=[0, 1]), [("bool", (3, 4))]),
        ],
    ),
]
