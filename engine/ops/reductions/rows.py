"""The reductions rows of the derivative table (ops/derivatives.py gathers them; op.py `row`)."""

from __future__ import annotations

from ..op import ELEMENTWISE, LINEAR, SYMMETRIC, Op, row, with_jvp
from . import formulas as F
from . import kernels as K

# fmt: off

# --- reductions --------------------------------------------------------------------------------
SUM = row("SumBackward0", lambda xp, self, self_sym_sizes, dtype: self.sum(dtype=dtype),
          attrs=("self_sym_sizes", "dtype"),
          self=lambda m, g, self_sym_sizes, dtype: m.expand(g, self_sym_sizes))
SUM_DIM = row("SumBackward1",
              lambda xp, self, self_sym_sizes, dim, keepdim, dtype: self.sum(dim, dtype, keepdims=keepdim),
              attrs=("self_sym_sizes", "dim", "keepdim", "dtype"),
              self=lambda m, g, self_sym_sizes, dim, keepdim, dtype:
                  m.expand(F.unreduce(g, self_sym_sizes, dim, keepdim), self_sym_sizes))
MEAN = row("MeanBackward0", lambda xp, self, self_sym_sizes, self_sym_numel, dtype: self.mean(dtype=dtype),
           attrs=("self_sym_sizes", "self_sym_numel", "dtype"),
           self=lambda m, g, self_sym_sizes, self_sym_numel, dtype:
               m.div_scalar(m.expand(g, self_sym_sizes), self_sym_numel))
MEAN_DIM = row("MeanBackward1",
               lambda xp, self, self_sym_sizes, dim, keepdim, dtype: self.mean(dim, dtype, keepdims=keepdim),
               attrs=("self_sym_sizes", "dim", "keepdim", "dtype"),
               self=lambda m, g, self_sym_sizes, dim, keepdim, dtype:
                   m.div_scalar(m.expand(F.unreduce(g, self_sym_sizes, dim, keepdim), self_sym_sizes),
                                F.count(self_sym_sizes, dim)))
VAR = row("VarBackward0",
          lambda xp, self, dim, correction, keepdim: K.variance(xp, self, dim, correction, keepdim),
          saves=("self",), attrs=("dim", "correction", "keepdim"), self=F.var_backward)
STD = row("StdBackward0",
          lambda xp, self, dim, correction, keepdim: xp.sqrt(K.variance(xp, self, dim, correction, keepdim)),
          saves=("self", "result"), attrs=("dim", "correction", "keepdim"), self=F.std_backward)
MAX = row("MaxBackward1", lambda xp, self: self.max(), saves=("self", "result"),
          self=F.evenly_distributed)
MIN = row("MinBackward1", lambda xp, self: self.min(), saves=("self", "result"),
          self=F.evenly_distributed)


def picks_one(node_name: str) -> Op:
    """A reduction that picks one element per slice along `dim`, at `indices` (an indexing key worked
    out on the raw array): max(dim), min(dim), median(dim), nanmedian(dim), mode."""
    return row(node_name,
               lambda xp, self, self_sym_sizes, dim, keepdim, indices: K.picked(self, dim, keepdim, indices),
               attrs=("self_sym_sizes", "dim", "keepdim", "indices"), frees=("indices",), self=F.picked_backward)


MAX_DIM = picks_one("MaxBackward0")
MIN_DIM = picks_one("MinBackward0")
NORM = row("LinalgVectorNormBackward0",
           lambda xp, self, ord, dim, keepdim, dtype: K.vector_norm(xp, K.cast(self, dtype), ord, dim, keepdim),
           saves=("self", "result"), attrs=("ord", "dim", "keepdim", "dtype"),
           self=lambda m, g, self, result, ord, dim, keepdim, dtype:
               F.vector_norm_backward(m, g, self, result, ord, dim, keepdim))
SOFTMAX = row("SoftmaxBackward0", lambda xp, self, dim: K.softmax(xp, self, dim),
              saves=("result",), attrs=("dim",),
              self=lambda m, g, result, dim: m.softmax_backward_data(g, result, dim))
SOFTMAX_BACKWARD_DATA = row("SoftmaxBackwardDataBackward0",
                            lambda xp, grad_output, output, dim:
                                output * (grad_output - (grad_output * output).sum(dim, keepdims=True)),
                            inputs=("grad_output", "output"), saves=("grad_output", "output"), attrs=("dim",),
                            promotes=True,
                            grad_output=lambda m, g, grad_output, output, dim: m.softmax_backward_data(g, output, dim),
                            output=lambda m, g, grad_output, output, dim:
                                g * (grad_output - m.sum(grad_output * output, dim, True))
                                - grad_output * m.sum(g * output, dim, True))
LOG_SOFTMAX = row("LogSoftmaxBackward0", lambda xp, self, dim: K.log_softmax(xp, self, dim),
                  saves=("result",), attrs=("dim",),
                  self=F.log_softmax_backward)

# --- reductions and scans --------------------------------------------------------------------
# The elements that cummax, median(dim), mode, ... pick are found on the raw arrays by their
# functions (functions.py) and passed in as indexing keys. The rows with two outputs
# (aminmax, var_mean, std_mean) have a joint formula whose `g` is the pair of their gradients.
PROD = row("ProdBackward0", lambda xp, self, dtype: self.prod(dtype=dtype),
           saves=("self", "result"), attrs=("dtype",),
           self=lambda m, g, self, result, dtype: F.prod_backward(m, g, self, result, None, False, dtype))
PROD_DIM = row("ProdBackward1", lambda xp, self, dim, keepdim, dtype: self.prod(dim, dtype, keepdims=keepdim),
               saves=("self", "result"), attrs=("dim", "keepdim", "dtype"), self=F.prod_backward)
CUMSUM = row("CumsumBackward0", lambda xp, self, dim, dtype: K.cumulative(xp.cumsum, self, dim, dtype),
             attrs=("dim", "dtype"), self=F.cumsum_backward)
CUMPROD = row("CumprodBackward0", lambda xp, self, dim, dtype: K.cumulative(xp.cumprod, self, dim, dtype),
              saves=("self", "result"), attrs=("dim", "dtype"), self=F.cumprod_backward)
LOGCUMSUMEXP = row("LogcumsumexpBackward0", lambda xp, self, dim: K.logcumsumexp(xp, self, dim),
                   saves=("self", "result"), attrs=("dim",), self=F.logcumsumexp_backward)
LOGSUMEXP = row("LogsumexpBackward0", lambda xp, self, dim, keepdim: K.logsumexp(xp, self, dim, keepdim),
                saves=("self", "result"), attrs=("dim", "keepdim"), self=F.logsumexp_backward)
AMAX = row("AmaxBackward0", lambda xp, self, dim, keepdim: self.max(axis=dim, keepdims=keepdim),
           saves=("self", "result"), attrs=("dim", "keepdim"), self=F.scaled_by_count)
AMIN = row("AminBackward0", lambda xp, self, dim, keepdim: self.min(axis=dim, keepdims=keepdim),
           saves=("self", "result"), attrs=("dim", "keepdim"), self=F.scaled_by_count)
AMINMAX = row("AminmaxBackward0",
              lambda xp, self, dim, keepdim: (self.min(axis=dim, keepdims=keepdim),
                                              self.max(axis=dim, keepdims=keepdim)),
              saves=("self",), attrs=("dim", "keepdim"), outputs=("min", "max"), joint=F.extremes_backward)
VAR_MEAN = row("VarMeanBackward0",
               lambda xp, self, dim, correction, keepdim: (K.variance(xp, self, dim, correction, keepdim),
                                                           self.mean(axis=dim, keepdims=keepdim)),
               saves=("self",), attrs=("dim", "correction", "keepdim"), outputs=("result0", "result1"),
               joint=F.var_mean_backward)
STD_MEAN = row("StdMeanBackward0",
               lambda xp, self, dim, correction, keepdim: (xp.sqrt(K.variance(xp, self, dim, correction, keepdim)),
                                                           self.mean(axis=dim, keepdims=keepdim)),
               saves=("self", "result0"), attrs=("dim", "correction", "keepdim"), outputs=("result0", "result1"),
               joint=F.std_mean_backward)


def scatters_back(node_name: str) -> Op:
    """cummax / cummin: each output is the input at `indices` (a key), so g is added back there."""
    return row(node_name, lambda xp, self, dim, indices: self[indices], attrs=("dim", "indices"), frees=("indices",),
               self=lambda m, g, dim, indices: m.index_grad(g, tuple(g.shape), indices, False))


CUMMAX = scatters_back("CummaxBackward0")
CUMMIN = scatters_back("CumminBackward0")
def median_of_all(node_name: str, ignore_nan: bool) -> Op:
    """median() / nanmedian(): one value, whose gradient is shared by the elements equal to it."""
    return row(node_name, lambda xp, self: K.median_all(xp, self, ignore_nan), saves=("self", "result"),
               self=F.evenly_distributed)


MEDIAN = median_of_all("MedianBackward0", False)
NANMEDIAN = median_of_all("NanmedianBackward0", True)
MEDIAN_DIM = picks_one("MedianBackward1")
NANMEDIAN_DIM = picks_one("NanmedianBackward1")
MODE = picks_one("ModeBackward0")
NANSUM = row("NansumBackward0",
             lambda xp, self, dim, keepdim, dtype: xp.nansum(self, axis=dim, keepdims=keepdim, dtype=dtype),
             saves=("self",), attrs=("dim", "keepdim", "dtype"), self=F.nansum_backward)
DIST = row("DistBackward0", lambda xp, self, other, p: K.vector_norm(xp, self - other, p, None, False),
           inputs=("self", "other"), saves=("self", "other", "result"), attrs=("p",), **ELEMENTWISE,
           self=F.dist_backward, other=F.dist_other_backward)
MAXIMUM = row("MaximumBackward0", lambda xp, self, other: xp.maximum(self, other),
              inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
              self=lambda m, g, self, other: F.pairwise_grad(m, g, self == other, self < other),
              other=lambda m, g, self, other: F.pairwise_grad(m, g, self == other, self > other))
MINIMUM = row("MinimumBackward0", lambda xp, self, other: xp.minimum(self, other),
              inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
              self=lambda m, g, self, other: F.pairwise_grad(m, g, self == other, self > other),
              other=lambda m, g, self, other: F.pairwise_grad(m, g, self == other, self < other))

# Forward AD (ops/forward_mode.py): sums and means are linear; softmax's Jacobian is symmetric.
with_jvp(LINEAR, SUM, SUM_DIM, MEAN, MEAN_DIM, CUMSUM)
with_jvp(SYMMETRIC, SOFTMAX)
LOG_SOFTMAX.jvp = F.log_softmax_jvp
