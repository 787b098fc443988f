"""Registry entries of engine.nn.functional: linear, convolution, pooling, normalization, embedding,
activations, softmax, losses and padding."""

import numpy as np

from ops.opinfo import OpInfo, Sample
from ops.support import (
    BCE_T,
    BN_MEAN,
    BN_VAR,
    C3_VS,
    IDX,
    IDX_VS,
    MSE_T,
    PROBS,
    PROBS_VS,
    R34,
    SL1_X_OFFSETS,
    T43_VS,
    TGT4,
    TGT4_IGN,
    TGT4_VS,
    UNIT,
    W3,
    WEIGHT3_VS,
    R,
    bce_logits_np,
    bn_np,
    conv_np,
    gelu_np,
    ln_np,
    log_softmax_np,
    nll_np,
    pool_np,
    probs_from,
    reduce_np,
    softmax_np,
)

OPS = [
    OpInfo(
        "softmax",
        [
            Sample(
                "method", lambda lib, x: x.softmax(1), [R34], ref=lambda x: softmax_np(x, 1), squared=True
            ),
            Sample(
                "method_dim0",
                lambda lib, x: x.softmax(dim=0),
                [R34],
                ref=lambda x: softmax_np(x, 0),
                squared=True,
            ),
            Sample(
                "method_neg",
                lambda lib, x: x.softmax(-1),
                [("r", (2, 3, 4))],
                ref=lambda x: softmax_np(x, -1),
                squared=True,
            ),
            Sample(
                "func",
                lambda lib, x: lib.softmax(x, 1),
                [("r", (2, 3, 4))],
                ref=lambda x: softmax_np(x, 1),
                squared=True,
            ),
            Sample(
                "func_kw",
                lambda lib, x: lib.softmax(x, dim=0),
                [R34],
                ref=lambda x: softmax_np(x, 0),
                squared=True,
            ),
            Sample(
                "implicit_free",
                lambda lib, x: lib.nn.functional.softmax(x, dim=-1) * lib.nn.functional.log_softmax(x, 1),
                [(R, (3, 4))],
                ref=lambda x: np.exp(log_softmax_np(x, 1)) * log_softmax_np(x, 1),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2: lib.nn.functional.softmax(x2, dim=1),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "log_softmax",
        [
            Sample(
                "method",
                lambda lib, x: x.log_softmax(1),
                [R34],
                ref=lambda x: log_softmax_np(x, 1),
                squared=True,
            ),
            Sample(
                "method_dim0",
                lambda lib, x: x.log_softmax(dim=0),
                [R34],
                ref=lambda x: log_softmax_np(x, 0),
                squared=True,
            ),
            Sample(
                "method_neg",
                lambda lib, x: x.log_softmax(-1),
                [("r", (2, 3, 4))],
                ref=lambda x: log_softmax_np(x, -1),
                squared=True,
            ),
            Sample(
                "func",
                lambda lib, x: lib.log_softmax(x, 1),
                [("r", (2, 3, 4))],
                ref=lambda x: log_softmax_np(x, 1),
                squared=True,
            ),
            Sample(
                "func_kw",
                lambda lib, x: lib.log_softmax(x, dim=-1),
                [R34],
                ref=lambda x: log_softmax_np(x, -1),
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2: lib.nn.functional.log_softmax(x2, 0),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "linear",
        [
            Sample(
                "2d_bias",
                lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
                [(R, (4, 3)), (R, (5, 3)), (R, (5,))],
                ref=lambda x, w, b: x @ w.T + b,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "1d_bias",
                lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
                [(R, (3,)), (R, (2, 3)), (R, (2,))],
                ref=lambda x, w, b: x @ w.T + b,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "3d_bias",
                lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
                [(R, (2, 2, 3)), (R, (2, 3)), (R, (2,))],
                ref=lambda x, w, b: x @ w.T + b,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "3d",
                lambda lib, x, w: lib.nn.functional.linear(x, w),
                [(R, (2, 2, 3)), (R, (2, 3))],
                ref=lambda x, w: x @ w.T,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph-2d",
                lambda lib, x2, w, b: lib.nn.functional.linear(x2, w, b),
                [("r", (4, 3)), ("r", (5, 3)), ("r", (5,))],
                torch_tol=(1e-10, 1e-12),
                in_float32=True,
            ),
            Sample(
                "graph-1d",
                lambda lib, x1, w, b: lib.nn.functional.linear(x1, w, b),
                [("r", (3,)), ("r", (5, 3)), ("r", (5,))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-3d",
                lambda lib, x3, w, b: lib.nn.functional.linear(x3, w, b),
                [("r", (2, 4, 3)), ("r", (5, 3)), ("r", (5,))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-3d_nobias",
                lambda lib, x3, w: lib.nn.functional.linear(x3, w),
                [("r", (2, 4, 3)), ("r", (5, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-1d_nobias",
                lambda lib, x1, w: lib.nn.functional.linear(x1, w),
                [("r", (3,)), ("r", (5, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "conv1d",
        [
            Sample(
                "",
                lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b, stride=2, padding=1),
                [(R, (2, 2, 7)), (R, (3, 2, 3)), (R, (3,))],
                ref=lambda x, w, b: conv_np(x, w, b, 2, 1),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "groups_dilation",
                lambda lib, x, w: lib.nn.functional.conv1d(x, w, padding=2, dilation=2, groups=2),
                [(R, (1, 4, 8)), (R, (4, 2, 3))],
                ref=lambda x, w: conv_np(x, w, None, 1, 2, 2, 2),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, seq, c1w: lib.nn.functional.conv1d(seq, c1w, padding=1),
                [("r", (2, 3, 7)), ("r", (4, 3, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-unbatched",
                lambda lib, seq, c1w: lib.nn.functional.conv1d(seq[0], c1w),
                [("r", (2, 3, 7)), ("r", (4, 3, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "conv2d",
        [
            Sample(
                "",
                lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1),
                [(R, (2, 2, 4, 4)), (R, (3, 2, 3, 3)), (R, (3,))],
                ref=lambda x, w, b: conv_np(x, w, b, 1, 1),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "stride_dilation",
                lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=2, padding=2, dilation=2),
                [(R, (1, 2, 6, 6)), (R, (2, 2, 3, 3))],
                ref=lambda x, w: conv_np(x, w, None, 2, 2, 2),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "groups",
                lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=(1, 2), groups=2),
                [(R, (1, 4, 4, 5)), (R, (4, 2, 2, 2)), (R, (4,))],
                ref=lambda x, w, b: conv_np(x, w, b, (1, 2), 0, 1, 2),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "same_even_kernel",
                lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same"),
                [(R, (1, 2, 4, 4)), (R, (2, 2, 2, 2))],
                ref=lambda x, w: conv_np(np.pad(x, [(0, 0), (0, 0), (0, 1), (0, 1)]), w),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "unbatched",
                lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1),
                [(R, (2, 4, 4)), (R, (2, 2, 3, 3))],
                ref=lambda x, w: conv_np(x[None], w, None, 1, 1)[0],
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, img, cw, cb: lib.nn.functional.conv2d(img, cw, cb, padding=1, stride=2),
                [("r", (2, 3, 6, 6)), ("r", (4, 3, 3, 3)), ("r", (4,))],
                torch_tol=(1e-10, 1e-12),
                in_float32=True,
            ),
            Sample(
                "graph-nobias_dilated",
                lambda lib, img, cw: lib.nn.functional.conv2d(img, cw, dilation=2, padding=2),
                [("r", (2, 3, 6, 6)), ("r", (4, 3, 3, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-unbatched",
                lambda lib, img, cw: lib.nn.functional.conv2d(img[0], cw),
                [("r", (2, 3, 6, 6)), ("r", (4, 3, 3, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "unfold",
        [
            Sample(
                "fold",
                lambda lib, x: lib.nn.functional.fold(
                    lib.nn.functional.unfold(x, 2, padding=1, stride=1) * 1.5, (3, 4), 2, padding=1
                ),
                [(R, (1, 2, 3, 4))],
                gradgrad=False,
                squared=True,
            ),
            Sample("", lambda lib, x: x.unfold(1, 2, 1), [(R, (3, 4))], node="UnfoldBackward0"),
            Sample("step", lambda lib, x: x.unfold(-1, 2, 2), [(R, (2, 5))], node="UnfoldBackward0"),
            Sample("0d", lambda lib, x: x.unfold(0, 1, 1), [(R, ())], node="UnfoldBackward0"),
        ],
    ),
    OpInfo(
        "max_pool2d",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
                [("d", (2, 2, 4, 4))],
                ref=lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "max"),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "overlap_pad",
                lambda lib, x: lib.nn.functional.max_pool2d(x, 3, stride=2, padding=1),
                [("d", (1, 2, 5, 5))],
                ref=lambda x: pool_np(x, (3, 3), (2, 2), (1, 1), "max"),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "ceil_dilation",
                lambda lib, x: lib.nn.functional.max_pool2d(x, 2, stride=2, dilation=2, ceil_mode=True),
                [("d", (1, 1, 6, 7))],
                ref=lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "max", ceil_mode=True, dilation=(2, 2)),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, img: lib.nn.functional.max_pool2d(img, 2),
                [("r", (2, 3, 6, 6))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-overlap",
                lambda lib, img: lib.nn.functional.max_pool2d(img, 3, stride=2, padding=1, ceil_mode=True),
                [("r", (2, 3, 6, 6))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "max_pool1d",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.max_pool1d(x, 2),
                [("d", (2, 2, 6))],
                ref=lambda x: x.reshape(2, 2, 3, 2).max(-1),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, seq: lib.nn.functional.max_pool1d(seq, 2),
                [("r", (2, 3, 7))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "avg_pool2d",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.avg_pool2d(x, 2),
                [(R, (2, 2, 4, 4))],
                ref=lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "avg"),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "pad_exclude",
                lambda lib, x: lib.nn.functional.avg_pool2d(
                    x, 3, stride=2, padding=1, count_include_pad=False
                ),
                [(R, (1, 2, 5, 4))],
                ref=lambda x: pool_np(x, (3, 3), (2, 2), (1, 1), "avg", count_include_pad=False),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "ceil",
                lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, ceil_mode=True),
                [(R, (1, 1, 5, 5))],
                ref=lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "avg", ceil_mode=True),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "divisor",
                lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, divisor_override=3),
                [(R, (1, 2, 4, 4))],
                ref=lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "avg") * 4 / 3,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, img: lib.nn.functional.avg_pool2d(
                    img, 3, stride=2, padding=1, count_include_pad=False
                ),
                [("r", (2, 3, 6, 6))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-ceil",
                lambda lib, img: lib.nn.functional.avg_pool2d(img, 4, ceil_mode=True),
                [("r", (2, 3, 6, 6))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "avg_pool1d",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.avg_pool1d(x, 3, stride=2, padding=1),
                [(R, (2, 2, 7))],
                ref=lambda x: pool_np(x[:, :, None, :], (1, 3), (1, 2), (0, 1), "avg")[:, :, 0],
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, seq: lib.nn.functional.avg_pool1d(seq, 2),
                [("r", (2, 3, 7))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "batch_norm",
        [
            Sample(
                "2d",
                lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
                [(R, (4, 3)), (R, (3,)), (R, (3,))],
                ref=bn_np,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "4d",
                lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
                [(R, (3, 3, 2, 2)), (R, (3,)), (R, (3,))],
                ref=bn_np,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "no_affine",
                lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True),
                [(R, (2, 3, 3))],
                ref=lambda x: bn_np(x, np.ones(3), np.zeros(3)),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "eval",
                lambda lib, x, w, b: lib.nn.functional.batch_norm(
                    x, lib.tensor(BN_MEAN), lib.tensor(BN_VAR), w, b, training=False
                ),
                [(R, (2, 3, 2)), (R, (3,)), (R, (3,))],
                ref=lambda x, w, b: (
                    (x - BN_MEAN[:, None]) / np.sqrt(BN_VAR[:, None] + 1e-5) * w[:, None] + b[:, None]
                ),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, img, c3: lib.nn.functional.batch_norm(
                    img, None, None, c3, c3 * 0.5, training=True
                ),
                [("r", (2, 3, 6, 6)), ("r", (3,))],
                torch_tol=(1e-10, 1e-12),
                in_float32=True,
            ),
            Sample(
                "graph-1d",
                lambda lib, x2: lib.nn.functional.batch_norm(x2, None, None, training=True),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "layer_norm",
        [
            Sample(
                "",
                lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (4,), w, b),
                [(R, (2, 3, 4)), (R, (4,)), (R, (4,))],
                ref=lambda x, w, b: ln_np(x, 1, w, b),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "2dims",
                lambda lib, x, w: lib.nn.functional.layer_norm(x, (2, 3), w),
                [(R, (2, 2, 3)), (R, (2, 3))],
                ref=lambda x, w: ln_np(x, 2, w),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "no_affine",
                lambda lib, x: lib.nn.functional.layer_norm(x, (3,)),
                [(R, (4, 3))],
                ref=lambda x: ln_np(x, 1),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x3: lib.nn.functional.layer_norm(x3, (4, 3), None, None),
                [("r", (2, 4, 3))],
                torch_tol=(1e-10, 1e-12),
                in_float32=True,
            ),
            Sample(
                "graph-affine",
                lambda lib, x2, c3: lib.nn.functional.layer_norm(x2, (3,), c3, c3),
                [("r", (4, 3)), ("r", (3,))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "embedding",
        [
            Sample(
                "",
                lambda lib, w: lib.nn.functional.embedding(lib.tensor(IDX), w),
                [(R, (6, 3))],
                ref=lambda w: w[IDX],
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, emb: lib.nn.functional.embedding(lib.tensor(IDX_VS), emb),
                [("r", (10, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "gelu",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.gelu(x),
                [(R, (3, 4))],
                ref=gelu_np,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "tanh",
                lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
                [(R, (3, 4))],
                ref=lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2: lib.nn.functional.gelu(x2),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
                in_float32=True,
            ),
            Sample(
                "graph-tanh",
                lambda lib, x2: lib.nn.functional.gelu(x2, approximate="tanh"),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "leaky_relu",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
                [("d", (3, 4))],
                ref=lambda x: np.where(x > 0, x, 0.2 * x),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2: lib.nn.functional.leaky_relu(x2, 0.1),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "mse_loss",
        [
            Sample(
                "",
                lambda lib, x, t: lib.nn.functional.mse_loss(x, t),
                [(R, (3, 4)), (R, (3, 4))],
                ref=lambda x, t: ((x - t) ** 2).mean(),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "sum",
                lambda lib, x: lib.nn.functional.mse_loss(x, lib.tensor(MSE_T), reduction="sum"),
                [(R, (3, 4))],
                ref=lambda x: ((x - MSE_T) ** 2).sum(),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "none",
                lambda lib, x: lib.nn.functional.mse_loss(x, lib.tensor(MSE_T), reduction="none"),
                [(R, (3, 4))],
                ref=lambda x: (x - MSE_T) ** 2,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2, t43: lib.nn.functional.mse_loss(x2, t43),
                [("r", (4, 3)), (UNIT, (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-none",
                lambda lib, x2, t43: lib.nn.functional.mse_loss(x2, t43, reduction="none"),
                [("r", (4, 3)), (UNIT, (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "l1_loss",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.l1_loss(x, lib.tensor(np.zeros((3, 4)))),
                [("d", (3, 4))],
                ref=lambda x: np.abs(x).mean(),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2, t43: lib.nn.functional.l1_loss(x2, t43),
                [("r", (4, 3)), (UNIT, (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-sum",
                lambda lib, x2, t43: lib.nn.functional.l1_loss(x2, t43, reduction="sum"),
                [("r", (4, 3)), (UNIT, (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "smooth_l1_loss",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.smooth_l1_loss(
                    x + lib.tensor(SL1_X_OFFSETS), lib.tensor(np.zeros((3, 4))), beta=0.5
                ),
                [("p", (3, 4))],
                ref=lambda x: reduce_np(
                    np.where(
                        np.abs(x + SL1_X_OFFSETS) < 0.5,
                        (x + SL1_X_OFFSETS) ** 2,
                        np.abs(x + SL1_X_OFFSETS) - 0.25,
                    ),
                    "mean",
                ),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "none_target",
                lambda lib, x, t: lib.nn.functional.smooth_l1_loss(x * 3, t, reduction="none"),
                [(R, (3, 4)), (R, (3, 4))],
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2, t43: lib.nn.functional.smooth_l1_loss(x2, t43, beta=0.5),
                [("r", (4, 3)), (UNIT, (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-beta0",
                lambda lib, x2, t43: lib.nn.functional.smooth_l1_loss(x2, t43, beta=0.0),
                [("r", (4, 3)), (UNIT, (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "nll_loss",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor(TGT4)),
                [(R, (4, 3))],
                ref=lambda x: nll_np(x, TGT4),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "weight_ignore_sum",
                lambda lib, x: lib.nn.functional.nll_loss(
                    x, lib.tensor(TGT4_IGN), weight=lib.tensor(W3), reduction="sum"
                ),
                [(R, (4, 3))],
                ref=lambda x: nll_np(x, TGT4_IGN, W3, "sum"),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "weight_mean",
                lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor(TGT4_IGN), weight=lib.tensor(W3)),
                [(R, (4, 3))],
                ref=lambda x: nll_np(x, TGT4_IGN, W3, "mean"),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "none",
                lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor(TGT4), reduction="none"),
                [(R, (4, 3))],
                ref=lambda x: nll_np(x, TGT4, None, "none"),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "4d",
                lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor(TGT4.reshape(1, 2, 2))),
                [(R, (1, 3, 2, 2))],
                ref=lambda x: nll_np(x, TGT4.reshape(1, 2, 2)),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "3d_none",
                lambda lib, x: lib.nn.functional.nll_loss(
                    x, lib.tensor(TGT4.reshape(2, 2)), reduction="none"
                ),
                [(R, (2, 3, 2))],
                ref=lambda x: nll_np(x, TGT4.reshape(2, 2), None, "none"),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2: lib.nn.functional.nll_loss(
                    lib.nn.functional.log_softmax(x2, 1), lib.tensor(TGT4_VS)
                ),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-weight_none",
                lambda lib, x2: lib.nn.functional.nll_loss(
                    x2, lib.tensor(TGT4_VS), weight=lib.tensor(WEIGHT3_VS), reduction="none"
                ),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-3d",
                lambda lib, x3: lib.nn.functional.nll_loss(
                    x3.transpose(1, 2), lib.tensor(TGT4_VS)[:2].reshape(2, 1).expand(2, 4)
                ),
                [("r", (2, 4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "cross_entropy",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(TGT4)),
                [(R, (4, 3))],
                ref=lambda x: nll_np(log_softmax_np(x, 1), TGT4),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "weight_ignore",
                lambda lib, x: lib.nn.functional.cross_entropy(
                    x, lib.tensor(TGT4_IGN), weight=lib.tensor(W3)
                ),
                [(R, (4, 3))],
                ref=lambda x: nll_np(log_softmax_np(x, 1), TGT4_IGN, W3),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "label_smoothing",
                lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(TGT4_IGN), label_smoothing=0.2),
                [(R, (4, 3))],
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "smoothing_weight_sum",
                lambda lib, x: lib.nn.functional.cross_entropy(
                    x, lib.tensor(TGT4), weight=lib.tensor(W3), label_smoothing=0.1, reduction="sum"
                ),
                [(R, (4, 3))],
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "probs",
                lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(PROBS)),
                [(R, (4, 3))],
                ref=lambda x: -(log_softmax_np(x, 1) * PROBS).sum() / 4,
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "probs_weight_smoothing",
                lambda lib, x: lib.nn.functional.cross_entropy(
                    x, lib.tensor(PROBS), weight=lib.tensor(W3), label_smoothing=0.3
                ),
                [(R, (4, 3))],
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "3d",
                lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(TGT4.reshape(2, 2))),
                [(R, (2, 3, 2))],
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2: lib.nn.functional.cross_entropy(x2, lib.tensor(TGT4_VS)),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
                in_float32=True,
            ),
            Sample(
                "graph-smoothing",
                lambda lib, x2: lib.nn.functional.cross_entropy(x2, lib.tensor(TGT4_VS), label_smoothing=0.1),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-smoothing_weight",
                lambda lib, x2: lib.nn.functional.cross_entropy(
                    x2,
                    lib.tensor(TGT4_VS),
                    weight=lib.tensor(WEIGHT3_VS),
                    label_smoothing=0.1,
                    ignore_index=2,
                ),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-smoothing_sum",
                lambda lib, x2: lib.nn.functional.cross_entropy(
                    x2, lib.tensor(TGT4_VS), label_smoothing=0.1, reduction="sum"
                ),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-smoothing_none",
                lambda lib, x2: lib.nn.functional.cross_entropy(
                    x2, lib.tensor(TGT4_VS), label_smoothing=0.1, reduction="none"
                ),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-probs",
                lambda lib, x2: lib.nn.functional.cross_entropy(x2, lib.tensor(PROBS_VS)),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-probs_weight",
                lambda lib, x2: lib.nn.functional.cross_entropy(
                    x2, lib.tensor(PROBS_VS), weight=lib.tensor(WEIGHT3_VS)
                ),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-probs_none",
                lambda lib, x2: lib.nn.functional.cross_entropy(x2, lib.tensor(PROBS_VS), reduction="none"),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "binary_cross_entropy",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.binary_cross_entropy(probs_from(x), lib.tensor(BCE_T)),
                [(R, (3, 4))],
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "weight_none_target",
                lambda lib, x, t: lib.nn.functional.binary_cross_entropy(
                    probs_from(x), probs_from(t), weight=lib.tensor(np.arange(1.0, 5.0)), reduction="none"
                ),
                [(R, (3, 4)), (R, (3, 4))],
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, t43: lib.nn.functional.binary_cross_entropy(t43, lib.tensor(PROBS_VS)),
                [(UNIT, (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-weight",
                lambda lib, t43: lib.nn.functional.binary_cross_entropy(
                    t43, lib.tensor(PROBS_VS), weight=lib.tensor(C3_VS)
                ),
                [(UNIT, (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "binary_cross_entropy_with_logits",
        [
            Sample(
                "",
                lambda lib, x: lib.nn.functional.binary_cross_entropy_with_logits(x, lib.tensor(BCE_T)),
                [(R, (3, 4))],
                ref=lambda x: bce_logits_np(x, BCE_T),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "weights_target",
                lambda lib, x, t: lib.nn.functional.binary_cross_entropy_with_logits(
                    x * 2,
                    t,
                    weight=lib.tensor(np.arange(1.0, 5.0)),
                    pos_weight=lib.tensor(np.array([0.5, 1, 2, 3.0])),
                ),
                [(R, (3, 4)), ("p", (3, 4))],
                ref=lambda x, t: bce_logits_np(x * 2, t, np.arange(1.0, 5.0), np.array([0.5, 1, 2, 3.0])),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph",
                lambda lib, x2: lib.nn.functional.binary_cross_entropy_with_logits(x2, lib.tensor(T43_VS)),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-pos_weight",
                lambda lib, x2, t43: lib.nn.functional.binary_cross_entropy_with_logits(
                    x2, t43, pos_weight=lib.tensor(WEIGHT3_VS), reduction="sum"
                ),
                [("r", (4, 3)), (UNIT, (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "pad",
        [
            Sample(
                "constant",
                lambda lib, x: lib.nn.functional.pad(x, (1, 2, 0, 1), value=0.5),
                [(R, (2, 2, 3))],
                ref=lambda x: np.pad(x, [(0, 0), (0, 1), (1, 2)], constant_values=0.5),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "negative",
                lambda lib, x: lib.nn.functional.pad(x, (-1, 2)),
                [(R, (3, 4))],
                ref=lambda x: np.pad(x[:, 1:], [(0, 0), (0, 2)]),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "reflect",
                lambda lib, x: lib.nn.functional.pad(x, (2, 1, 1, 1), mode="reflect"),
                [(R, (2, 3, 4))],
                ref=lambda x: np.pad(x, [(0, 0), (1, 1), (2, 1)], mode="reflect"),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "replicate",
                lambda lib, x: lib.nn.functional.pad(x, (2, 3), mode="replicate"),
                [(R, (1, 2, 3))],
                ref=lambda x: np.pad(x, [(0, 0), (0, 0), (2, 3)], mode="edge"),
                ref_tol=(1e-10, 1e-12),
                gradgrad=False,
                squared=True,
            ),
            Sample(
                "graph-constant",
                lambda lib, x3: lib.nn.functional.pad(x3, (1, 2, -1, 1), value=0.5),
                [("r", (2, 4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-reflect",
                lambda lib, img: lib.nn.functional.pad(img, (1, 2, 2, 1), mode="reflect"),
                [("r", (2, 3, 6, 6))],
                torch_tol=(1e-10, 1e-12),
            ),
            Sample(
                "graph-replicate_1d",
                lambda lib, seq: lib.nn.functional.pad(seq, (2, 3), mode="replicate"),
                [("r", (2, 3, 7))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
    OpInfo(
        "dropout",
        [
            Sample(
                "graph-eval",
                lambda lib, x2: lib.nn.functional.dropout(x2 * 1, 0.5, training=False),
                [("r", (4, 3))],
                torch_tol=(1e-10, 1e-12),
            ),
        ],
    ),
]
