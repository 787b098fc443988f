"""The derivative table: every differentiable op, declared once (PyTorch's derivatives.yaml).

Each op family keeps its rows in its own folder (`ops/<family>/rows.py`, beside the family's
formulas, kernels and functions); this module gathers them, so `D.MUL` names any row.

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
  `[...]` and `.reshape` work on both; everything else goes through `m` (namespaces.py,
  tensor_math.py).
- `broadcasts=True`: the inputs broadcast against each other, so each input's gradient is
  summed back to its shape and cast back to its dtype (in FormulaNode.apply, one place).
  `promotes=True`: the operands' dtypes are promoted as torch does (promotion.py).
- `casts=True`: the forward converts to a dtype it is given (`.to()`), so a result that is not
  bfloat16 stays so; otherwise a 0-d result that lost its first input's bfloat16 tag (numpy's
  scalars, CuPy's reductions) gets it back (op.apply_op).

- `jvp=`: forward AD's rule (ops/forward_mode.py). `LINEAR`: the row's forward applied to the
  tangents (views, sums, joins, indexing); `BILINEAR`: once per operand's tangent (mm, bmm);
  `ADD_PRODUCT` (addmm's family), `BIASED_PRODUCT` (convolution); `SYMMETRIC`: the row's Jacobian is
  symmetric (unary elementwise math, softmax), so its formula applied to the tangent is the tangent;
  or a function `(m, tangents, inputs, attrs, result)` returning the output's tangent through `m`.
  ELEMENTWISE rows need none (their Jacobian is diagonal); a row with no rule goes through its
  backward (J v = d/du <Jᵀu, v>). Rows get theirs at the end of the family's rows.py, `with_jvp(...)`.

Every name is checked when the row is built: forward and formulas must take exactly these
parameters, by name, with no `*args`, so a malformed row fails at import, not in a user's
backward. A formula longer than a line lives in the family's formulas.py; a forward longer
than one expression in its kernels.py.

Adding an op
------------
Pick its family under ops/ (pointwise, reductions, shaping, linalg, nn), then:
1. A row in `<family>/rows.py` (a long formula in `<family>/formulas.py`, a long forward in
   `<family>/kernels.py`), and its name in this module's import of that family's rows.
2. Its function in `<family>/functions.py` (or `core.py`, for the few ops ops/inplace.py and
   other families build on), with torch's argument handling, calling `apply_op(D.ROW, inputs,
   attrs)` and decorated `@public` (api.py): that one decorator makes it `engine.<name>` and
   `Tensor.<name>` (`function=False` / `method=False` for one of them). A unary row is one
   line, `name = _unary(D.ROW, "name")` (pointwise/core.py), which also gives `Tensor.name_`;
   other in-place variants are `@public(function=False)` beside the op, applied with
   `inplace.apply_inplace`. An nn op's torch.nn.functional argument handling goes in
   engine/nn/functional/, which applies the nn family's rows.
3. Tests: an entry in tests/ops/registry.py (an OpInfo and its samples, in its family's module):
   values, node name, finite differences first and second order, forward AD, torch parity, the
   CuPy stand-in.
4. `python scripts/make_stubs.py`, so the type stubs name it (tests/project/test_stubs.py checks).
"""

from .op import row  # noqa: F401  (the row language, documented above)

# The rows of each family, in its rows.py's order.
# isort: off
# fmt: off
from .pointwise.rows import (
    ADD, SUB, RSUB, MUL, MUL_SCALAR, DIV, DIV_SCALAR, NEG, RECIPROCAL, POW_SCALAR, POW_TENSOR, RPOW, EXP,
    LOG, LOG1P, SQRT, SIN, COS, TANH, SIGMOID, RELU, LEAKY_RELU, THRESHOLD_BACKWARD, LEAKY_RELU_BACKWARD,
    GELU, ERF, ABS, SIGN, CLAMP, CLAMP_TENSOR, WHERE, FLOOR, CEIL, TRUNC, ROUND, ROUND_DECIMALS, FRAC, SGN,
    RSQRT, TAN, ASIN, ACOS, ATAN, SINH, COSH, ASINH, ACOSH, ATANH, EXPM1, EXP2, LOG2, LOG10, ERFC, ERFINV,
    INPLACE_NOT_DIFFERENTIABLE, NAN_TO_NUM, ATAN2, COPYSIGN, COPYSIGN_SCALAR, FMOD, FMOD_SCALAR, REMAINDER,
    REMAINDER_SCALAR, HYPOT, LOGADDEXP, LOGADDEXP2, XLOGY, XLOGY_NUMBER_SELF, XLOGY_NUMBER_OTHER, LERP,
    LERP_TENSOR, DIV_MODE, NOT_IMPLEMENTED, NO_FLOOR_DIVIDE, NO_REMAINDER, FLOOR_DIVIDE,
    FLOOR_DIVIDE_NUMBER, REMAINDER_NUMBER_SELF,
)
from .reductions.rows import (
    SUM, SUM_DIM, MEAN, MEAN_DIM, VAR, STD, MAX, MIN, MAX_DIM, MIN_DIM, NORM, SOFTMAX, SOFTMAX_BACKWARD_DATA, LOG_SOFTMAX, PROD,
    PROD_DIM, CUMSUM, CUMPROD, LOGCUMSUMEXP, LOGSUMEXP, AMAX, AMIN, AMINMAX, VAR_MEAN, STD_MEAN, CUMMAX,
    CUMMIN, MEDIAN, NANMEDIAN, MEDIAN_DIM, NANMEDIAN_DIM, MODE, NANSUM, DIST, MAXIMUM, MINIMUM,
)
from .shaping.rows import (
    VIEW, RESHAPE_ALIAS, UNSAFE_VIEW, SQUEEZE, T, T_, TRANSPOSE, TRANSPOSE_, PERMUTE, EXPAND, SELECT, SLICE,
    ALIAS, AS_STRIDED_, AS_STRIDED, CLONE, TO_COPY, INDEX, INDEX_GRAD, SLICE_GRAD, SELECT_GRAD, CAT, STACK,
    COPY, FILL, ZERO, INDEX_PUT, BERNOULLI, BERNOULLI_TENSOR, SPLIT, SPLIT_WITH_SIZES, UNBIND, DIAGONAL,
    DIAGONAL_COPY, UNFOLD, AS_STRIDED_VIEW, INDEX_SELECT,
    GATHER, SCATTER, SCATTER_VALUE, SCATTER_ADD, SCATTER_REDUCE, SCATTER_NOT_DIFFERENTIABLE, INDEX_ADD,
    INDEX_COPY, INDEX_FILL, INDEX_FILL_TENSOR, MASKED_FILL, MASKED_FILL_TENSOR, MASKED_SELECT,
    MASKED_SCATTER, TAKE, FLIP, ROLL, ROT90, REPEAT, TRIL, TRIU, DIAG_EMBED, TRACE, SORT, TOPK, KTHVALUE,
    UNIQUE,
)
from .linalg.rows import (
    MM, MV, DOT, BMM, ADDMM, ADDMM_SCALED, ADDMV, ADDR, BADDBMM, ADDBMM, LINALG_CROSS, DET, SLOGDET, INV,
    SOLVE, CHOLESKY, CHOLESKY_DEPRECATED, QR, SVD, EIGH,
)
from .nn.rows import (
    CONVOLUTION, IM2COL, COL2IM, MAX_POOL_TIE, MAX_POOL, AVG_POOL, NATIVE_BATCH_NORM, NATIVE_LAYER_NORM,
    EMBEDDING, CONSTANT_PAD, INDEX_PAD, MSE_LOSS, SMOOTH_L1_LOSS, NLL_LOSS, BINARY_CROSS_ENTROPY,
    BCE_WITH_LOGITS, SILU, MISH, HARDSIGMOID_TIE, HARDSIGMOID, HARDSWISH, HARDTANH_TIE, HARDTANH, ELU,
    ELU_, CELU, CELU_, LOG_SIGMOID, SOFTPLUS, GLU, ADD_SCALAR, SUB_SCALAR, CLAMP_MIN, CLAMP_MIN_TENSOR,
    P_NORM, CDIST, EUCLIDEAN_DIST, HUBER_LOSS, SOFT_MARGIN_LOSS, AVG_POOL3D, NATIVE_GROUP_NORM,
    ADAPTIVE_AVG_POOL, ADAPTIVE_MAX_POOL_TIE, ADAPTIVE_MAX_POOL2D, MAX_UNPOOL2D, PIXEL_SHUFFLE,
    PIXEL_UNSHUFFLE, EMBEDDING_BAG, CONV_TRANSPOSE, UPSAMPLE, SAFE_SOFTMAX, SDPA_FLASH_CPU,
)
# fmt: on
# isort: on
