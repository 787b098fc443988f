"""The derivative table: every differentiable op, declared once (PyTorch's derivatives.yaml).

The language of a row
---------------------
    NAME = row("NodeBackward0", forward, inputs=(...), saves=(...), attrs=(...),
               broadcasts=..., promotes=..., <input>=formula, ...)

- `"NodeBackward0"`: the node's name, PyTorch's, because users search for it.
- `inputs`: the differentiable arguments, in order, with PyTorch's names (`self`, `other`,
  `mat2`, ...). `variadic=True`: one input that is a list of tensors (`cat`'s `tensors`).
- `attrs`: the non-tensor arguments (and forward results a backward needs, `result1`, ...),
  kept on the node as `_saved_<name>`, in the order the caller passes them.
- `saves`: the tensors the backward reads: inputs by name, and `result` for the output
  (`_saved_<name>` too). An input is saved only when the formula of an input that requires
  grad reads it, as PyTorch saves conditionally.
- `outputs`: the outputs' names, when PyTorch names them (`("U", "S", "Vh")`; `("result",)`
  by default), so `saves` can name them. A row of several outputs returns a tuple from its
  forward, is applied with `apply_multi`, and its formulas get `g` as a tuple, one gradient
  per output (None where none arrived).
- `frees`: attrs that PyTorch's node keeps as saved tensors (an index, a mask): freed with
  the saved values after backward, so a second backward through the node raises PyTorch's
  error, and so does reading `_saved_<name>` afterwards.
- `keeps`: the last attrs, when they are boxes (`[None]`) the forward fills with an intermediate
  that the raw-array formula reuses (GELU's normal cdf) and PyTorch's node does not save: no
  `_saved_*` for them, not shown by `gradcli graph`, dropped when the node is freed. Formulas
  under create_graph recompute instead, so the recorded backward stays differentiable.
- `forward(xp, *inputs, *attrs)`: the op on raw arrays; `xp` is numpy or cupy.
- `<input>=formula(m, g, *saves, *attrs)`: that input's gradient, given the output's
  gradient `g`; `joint=` instead: one formula returning every input's gradient. Formulas
  run on raw arrays (`m` an ArrayMath) or, under create_graph=True, on Tensors (`m` the
  TensorMath, every step recorded), so every row is twice differentiable. Operators,
  `[...]` and `.reshape` work on both; everything else goes through `m` (namespaces.py).
- `broadcasts=True`: the inputs broadcast against each other, so each input's gradient is
  summed back to its shape and cast back to its dtype (in FormulaNode.apply, one place).
  `promotes=True`: the operands' dtypes are promoted as torch does (promotion.py).
- `casts=True`: the forward converts to a dtype it is given (`.to()`), so a result that is not
  bfloat16 stays so; otherwise a 0-d result that lost its first input's bfloat16 tag (numpy's
  scalars, CuPy's reductions) gets it back (op.apply_op).

Every name is checked when the row is built: forward and formulas must take exactly these
parameters, by name, with no `*args`, so a malformed row fails at import, not in a user's
backward. Formulas longer than a line live in formulas.py; forwards in kernels.py.

Adding an op
------------
1. A row here (a long formula in formulas.py, a long forward in kernels.py).
2. Its function, with torch's argument handling, calling `apply_op(ROW, inputs, attrs)` and
   decorated `@public` (api.py): that one decorator makes it `engine.<name>` and
   `Tensor.<name>` (`function=False` / `method=False` for one of them). A unary row is one line
   in functions.py, `name = _unary(ROW, "name")`, which also gives `Tensor.name_`; other
   in-place variants are `@public(function=False)` in inplace.py; nn functions go in
   nn/functional/.
3. Tests: tests/test_op_grads.py (values, finite differences first and second order; the same
   file runs on torch with `ENGINE_MODULE=torch`).
4. `python scripts/make_stubs.py`, so the type stubs name it (tests/test_stubs.py checks).
"""

from __future__ import annotations

import math

from .linalg.rows import (
    ADDBMM,
    ADDMM,
    ADDMM_SCALED,
    ADDMV,
    ADDR,
    BADDBMM,
    BMM,
    CHOLESKY,
    CHOLESKY_DEPRECATED,
    DET,
    DOT,
    EIGH,
    INV,
    LINALG_CROSS,
    MM,
    MV,
    QR,
    SLOGDET,
    SOLVE,
    SVD,
)
from .namespaces import array_math
from .nn.rows import (
    ADAPTIVE_AVG_POOL,
    ADAPTIVE_MAX_POOL2D,
    ADAPTIVE_MAX_POOL_TIE,
    ADD_SCALAR,
    AVG_POOL,
    AVG_POOL3D,
    BCE_WITH_LOGITS,
    BINARY_CROSS_ENTROPY,
    CDIST,
    CELU,
    CELU_,
    CLAMP_MIN,
    CLAMP_MIN_TENSOR,
    COL2IM,
    CONSTANT_PAD,
    CONV_TRANSPOSE,
    CONVOLUTION,
    ELU,
    ELU_,
    EMBEDDING,
    EMBEDDING_BAG,
    EUCLIDEAN_DIST,
    GLU,
    HARDSIGMOID,
    HARDSIGMOID_TIE,
    HARDSWISH,
    HARDTANH,
    HARDTANH_TIE,
    HUBER_LOSS,
    IM2COL,
    INDEX_PAD,
    LOG_SIGMOID,
    MAX_POOL,
    MAX_POOL_TIE,
    MAX_UNPOOL2D,
    MISH,
    MSE_LOSS,
    NATIVE_BATCH_NORM,
    NATIVE_GROUP_NORM,
    NATIVE_LAYER_NORM,
    NLL_LOSS,
    P_NORM,
    PIXEL_SHUFFLE,
    PIXEL_UNSHUFFLE,
    SAFE_SOFTMAX,
    SDPA_FLASH_CPU,
    SILU,
    SMOOTH_L1_LOSS,
    SOFT_MARGIN_LOSS,
    SOFTPLUS,
    SUB_SCALAR,
    UPSAMPLE,
)
from .op import ELEMENTWISE, Op, node_class, row, tied_to_self
from .pointwise import formulas as F
from .pointwise import kernels as K
from .pointwise.rows import (
    ABS,
    ACOS,
    ACOSH,
    ADD,
    ASIN,
    ASINH,
    ATAN,
    ATAN2,
    ATANH,
    CEIL,
    CLAMP,
    CLAMP_TENSOR,
    COPYSIGN,
    COPYSIGN_SCALAR,
    COS,
    COSH,
    DIV,
    DIV_MODE,
    DIV_SCALAR,
    ERF,
    ERFC,
    ERFINV,
    EXP,
    EXP2,
    EXPM1,
    FLOOR,
    FLOOR_DIVIDE,
    FLOOR_DIVIDE_NUMBER,
    FMOD,
    FMOD_SCALAR,
    FRAC,
    GELU,
    HYPOT,
    INPLACE_NOT_DIFFERENTIABLE,
    LEAKY_RELU,
    LEAKY_RELU_BACKWARD,
    LERP,
    LERP_TENSOR,
    LOG,
    LOG1P,
    LOG2,
    LOG10,
    LOGADDEXP,
    LOGADDEXP2,
    MUL,
    MUL_SCALAR,
    NAN_TO_NUM,
    NEG,
    NO_FLOOR_DIVIDE,
    NO_REMAINDER,
    NOT_IMPLEMENTED,
    POW_SCALAR,
    POW_TENSOR,
    RECIPROCAL,
    RELU,
    REMAINDER,
    REMAINDER_NUMBER_SELF,
    REMAINDER_SCALAR,
    ROUND,
    ROUND_DECIMALS,
    RPOW,
    RSQRT,
    RSUB,
    SGN,
    SIGMOID,
    SIGN,
    SIN,
    SINH,
    SQRT,
    SUB,
    TAN,
    TANH,
    THRESHOLD_BACKWARD,
    TRUNC,
    WHERE,
    XLOGY,
    XLOGY_NUMBER_OTHER,
    XLOGY_NUMBER_SELF,
)
from .reductions.rows import (
    AMAX,
    AMIN,
    AMINMAX,
    CUMMAX,
    CUMMIN,
    CUMPROD,
    CUMSUM,
    DIST,
    LOG_SOFTMAX,
    LOGCUMSUMEXP,
    LOGSUMEXP,
    MAX,
    MAX_DIM,
    MAXIMUM,
    MEAN,
    MEAN_DIM,
    MEDIAN,
    MEDIAN_DIM,
    MIN,
    MIN_DIM,
    MINIMUM,
    MODE,
    NANMEDIAN,
    NANMEDIAN_DIM,
    NANSUM,
    NORM,
    PROD,
    PROD_DIM,
    SOFTMAX,
    STD,
    STD_MEAN,
    SUM,
    SUM_DIM,
    VAR,
    VAR_MEAN,
)
from .shaping import formulas as shaping_formulas
from .shaping.rows import (
    ALIAS,
    AS_STRIDED,
    AS_STRIDED_,
    AS_STRIDED_VIEW,
    CAT,
    CLONE,
    COPY,
    DIAG_EMBED,
    DIAGONAL,
    DIAGONAL_COPY,
    EXPAND,
    FILL,
    FLIP,
    GATHER,
    INDEX,
    INDEX_ADD,
    INDEX_COPY,
    INDEX_FILL,
    INDEX_FILL_TENSOR,
    INDEX_GRAD,
    INDEX_PUT,
    INDEX_SELECT,
    KTHVALUE,
    MASKED_FILL,
    MASKED_FILL_TENSOR,
    MASKED_SCATTER,
    MASKED_SELECT,
    PERMUTE,
    REPEAT,
    ROLL,
    ROT90,
    SCATTER,
    SCATTER_ADD,
    SCATTER_NOT_DIFFERENTIABLE,
    SCATTER_REDUCE,
    SCATTER_VALUE,
    SELECT,
    SLICE,
    SORT,
    SPLIT,
    SPLIT_WITH_SIZES,
    SQUEEZE,
    STACK,
    T_,
    TAKE,
    TO_COPY,
    TOPK,
    TRACE,
    TRANSPOSE,
    TRANSPOSE_,
    TRIL,
    TRIU,
    UNBIND,
    UNFOLD,
    UNIQUE,
    UNSAFE_VIEW,
    VIEW,
    ZERO,
    T,
)
# fmt: on
