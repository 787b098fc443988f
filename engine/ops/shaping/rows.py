"""The shaping rows of the derivative table (ops/derivatives.py gathers them; op.py `row`)."""

from __future__ import annotations

from ..namespaces import array_math
from ..op import LINEAR, Op, no_forward_ad, row, with_jvp
from ..reductions import formulas as reductions_formulas
from . import formulas as F
from . import kernels as K

# fmt: off

# --- shapes and views (forwards return views of the input) -----------------------------------
VIEW = row("ViewBackward0", lambda xp, self, self_sym_sizes, size: self.reshape(size),
           attrs=("self_sym_sizes", "size"),
           self=lambda m, g, self_sym_sizes, size: g.reshape(self_sym_sizes))
# reshape of a strided operand it can view without a copy: torch's _reshape_alias
RESHAPE_ALIAS = row("ReshapeAliasBackward0", lambda xp, self, self_sym_sizes, size: self.reshape(size),
                    attrs=("self_sym_sizes", "size"),
                    self=lambda m, g, self_sym_sizes, size: g.reshape(self_sym_sizes))
UNSAFE_VIEW = row("UnsafeViewBackward0", lambda xp, self, self_sym_sizes, size: self.reshape(size),
                  attrs=("self_sym_sizes", "size"),
                  self=lambda m, g, self_sym_sizes, size: g.reshape(self_sym_sizes))
SQUEEZE = {name: row(name, lambda xp, self, self_sym_sizes, size: self.reshape(size),
                     attrs=("self_sym_sizes", "size"),
                     self=lambda m, g, self_sym_sizes, size: g.reshape(self_sym_sizes))
           for name in ("SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "SqueezeBackward3",
                        "SqueezeBackward4", "SqueezeBackward5", "UnsqueezeBackward0", "UnsqueezeBackward1")}
# the out-of-place view (Backward0) and the in-place one (Backward1: t_, transpose_)
T, T_ = (row(name, lambda xp, self: self.T, self=lambda m, g: g if g.ndim < 2 else m.transpose(g, 0, 1))
         for name in ("TBackward0", "TBackward1"))
TRANSPOSE, TRANSPOSE_ = (row(name, lambda xp, self, dim0, dim1: xp.swapaxes(self, dim0, dim1),
                             attrs=("dim0", "dim1"),
                             self=lambda m, g, dim0, dim1: m.transpose(g, dim0, dim1))
                         for name in ("TransposeBackward0", "TransposeBackward1"))
PERMUTE = row("PermuteBackward0", lambda xp, self, dims, inverse: self.transpose(dims), attrs=("dims", "inverse"),
              self=lambda m, g, dims, inverse: m.permute(g, inverse))
EXPAND = row("ExpandBackward0", lambda xp, self, self_sym_sizes, size: K.expand(xp, self, size),
             attrs=("self_sym_sizes", "size"),
             self=lambda m, g, self_sym_sizes, size: m.sum_to(g, self_sym_sizes))
SELECT = row("SelectBackward0", lambda xp, self, self_sym_sizes, dim, index, key: self[key],
             attrs=("self_sym_sizes", "dim", "index", "key"),
             self=lambda m, g, self_sym_sizes, dim, index, key: m.select_backward(g, self_sym_sizes, key))
SLICE = row("SliceBackward0", lambda xp, self, self_sym_sizes, dim, start, end, step, key: self[key],
            attrs=("self_sym_sizes", "dim", "start", "end", "step", "key"),
            self=lambda m, g, self_sym_sizes, dim, start, end, step, key:
                m.slice_backward(g, self_sym_sizes, key))
ALIAS = row("AliasBackward0", lambda xp, self: self[...], self=lambda m, g: g)
AS_STRIDED_ = row("AsStridedBackward1",
                  lambda xp, self, self_sym_sizes, size, stride, storage_offset, gather, scatter:
                      K.as_strided(self, size, stride, storage_offset),
                  attrs=("self_sym_sizes", "size", "stride", "storage_offset", "gather", "scatter"),
                  self=F.as_strided_backward)
AS_STRIDED = row("AsStridedBackward0", lambda xp, self, self_sym_sizes, view_fn: view_fn(xp, self),
                 attrs=("self_sym_sizes", "view_fn"),
                 self=lambda m, g, self_sym_sizes, view_fn: m.embed(g, self_sym_sizes, view_fn))

# --- copies, indexing, joining -------------------------------------------------------------------
CLONE = row("CloneBackward0", lambda xp, self: self.copy(), self=lambda m, g: g)
TO_COPY = row("ToCopyBackward0",
              lambda xp, self, dtype, device, self_dtype, self_device: K.to_copy(self, dtype, device),
              attrs=("dtype", "device", "self_dtype", "self_device"), casts=True,
              self=lambda m, g, dtype, device, self_dtype, self_device: m.to(g, self_dtype, self_device))
INDEX = row("IndexBackward0", lambda xp, self, self_sym_sizes, indices: self[indices],
            attrs=("self_sym_sizes", "indices"), frees=("indices",),
            self=lambda m, g, self_sym_sizes, indices: m.index_grad(g, self_sym_sizes, indices, False))


def _placing_grad(name: str) -> Op:
    """A gradient placed into zeros of the input's shape at `indices`, as a differentiable op of it
    (the backward of an index, a slice or a select, under create_graph): torch's `name` node."""
    return row(name,
               lambda xp, grad, self_sym_sizes, indices, basic:
                   array_math(grad).index_grad(grad, self_sym_sizes, indices, basic),
               inputs=("grad",), attrs=("self_sym_sizes", "indices", "basic"),
               grad=lambda m, g, self_sym_sizes, indices, basic: g[indices])


INDEX_GRAD = _placing_grad("IndexBackwardBackward0")
SLICE_GRAD = _placing_grad("SliceBackwardBackward0")
SELECT_GRAD = _placing_grad("SelectBackwardBackward0")
CAT = row("CatBackward0", lambda xp, tensors, dim, sizes: K.concatenate(xp, tensors, dim),
          inputs=("tensors",), variadic=True, attrs=("dim", "sizes"),
          joint=lambda m, g, dim, sizes: F.split_backward(g, dim, sizes))
STACK = row("StackBackward0", lambda xp, tensors, dim, n: K.stack(xp, tensors, dim),
            inputs=("tensors",), variadic=True, attrs=("dim", "n"),
            joint=lambda m, g, dim, n: [g[(slice(None),) * dim + (i,)] for i in range(n)])

# --- in-place building blocks (applied through ops.inplace) ------------------------------------
COPY = row("CopyBackwards", lambda xp, self, src: K.copied_into(xp, self, src),
           inputs=("self", "src"), broadcasts=True,
           self=lambda m, g: g * 0.0,
           src=lambda m, g: g)
FILL = row("FillBackward0", lambda xp, self, value: xp.full_like(self, value), attrs=("value",),
           self=lambda m, g, value: g * 0.0)
ZERO = row("ZeroBackward0", lambda xp, self: xp.zeros_like(self), self=lambda m, g: g * 0.0)
BERNOULLI = row("BernoulliBackward2", lambda xp, self, draws: draws.astype(self.dtype), attrs=("draws",),
                self=lambda m, g, draws: g * 0.0)
BERNOULLI_TENSOR = row("BernoulliBackward1", lambda xp, self, p, draws: draws.astype(self.dtype),
                       inputs=("self", "p"), attrs=("draws",), broadcasts=True,
                       self=lambda m, g, draws: g * 0.0,
                       p=lambda m, g, draws: g * 0.0)
INDEX_PUT = row("IndexPutBackward0", lambda xp, self, values, indices: K.index_put(self, values, indices),
                inputs=("self", "values"), attrs=("indices",), frees=("indices",), broadcasts=True,
                self=lambda m, g, indices: m.zero_at(g, indices),
                values=lambda m, g, indices: g[indices])

# --- shape and indexing --------------------------------------------------------------------------
# Rows behind functions.py. An index argument arrives as the advanced-indexing `key` it
# reads or writes (built there, on the tensor's device); a 0-dim tensor is indexed as one element.
def multi_output(op: Op) -> Op:
    """A row whose node has several outputs (split, unbind): its formula gets the list of the outputs'
    gradients (None where none arrived), as PyTorch's multi-output nodes do."""

    def apply(self, grads, m, create_graph):
        return [self.formulas[0](m, grads, *self._attrs)]

    node = op.node
    op.node = type(node.__name__, (node,), {"__slots__": ("num_outputs",), "apply": apply})
    return op


SPLIT = multi_output(row("SplitBackward0",
                         lambda xp, self, self_sym_sizes, split_size, dim, sizes: K.split(self, dim, sizes),
                         attrs=("self_sym_sizes", "split_size", "dim", "sizes"),
                         self=lambda m, g, self_sym_sizes, split_size, dim, sizes:
                             F.split_grads(m, g, self_sym_sizes, dim, sizes)))
SPLIT_WITH_SIZES = multi_output(row("SplitWithSizesBackward0",
                                    lambda xp, self, self_sym_sizes, split_sizes, dim: K.split(self, dim, split_sizes),
                                    attrs=("self_sym_sizes", "split_sizes", "dim"),
                                    self=lambda m, g, self_sym_sizes, split_sizes, dim:
                                        F.split_grads(m, g, self_sym_sizes, dim, split_sizes)))
UNBIND = multi_output(row("UnbindBackward0", lambda xp, self, self_sym_sizes, dim: K.unbind(self, dim),
                          attrs=("self_sym_sizes", "dim"),
                          self=lambda m, g, self_sym_sizes, dim: F.unbind_grads(m, g, self_sym_sizes, dim)))
DIAGONAL = row("DiagonalBackward0",
               lambda xp, self, self_sym_sizes, offset, dim1, dim2: K.diagonal(xp, self, offset, dim1, dim2),
               attrs=("self_sym_sizes", "offset", "dim1", "dim2"), self=F.diagonal_backward)
DIAGONAL_COPY = row("DiagonalBackward0_copy",
                    lambda xp, self, self_sym_sizes, offset, dim1, dim2:
                        K.diagonal(xp, self, offset, dim1, dim2).copy(),
                    attrs=("self_sym_sizes", "offset", "dim1", "dim2"), self=F.diagonal_backward)
UNFOLD = row("UnfoldBackward0",
             lambda xp, self, self_sym_sizes, dimension, size, step: K.unfold(xp, self, dimension, size, step),
             attrs=("self_sym_sizes", "dimension", "size", "step"),
             self=F.unfold_backward)
AS_STRIDED_VIEW = row("AsStridedBackward0",
                      lambda xp, self, self_sym_sizes, size, stride, storage_offset, positions:
                          K.strided_view(xp, self, size, stride, storage_offset),
                      attrs=("self_sym_sizes", "size", "stride", "storage_offset", "positions"),
                      self=lambda m, g, self_sym_sizes, size, stride, storage_offset, positions:
                          F.as_strided_view_backward(m, g, self_sym_sizes, positions))
INDEX_SELECT = row("IndexSelectBackward0", lambda xp, self, self_sym_sizes, dim, index, key: K.take_at(self, key),
                   attrs=("self_sym_sizes", "dim", "index", "key"), frees=("index",),
                   self=lambda m, g, self_sym_sizes, dim, index, key: F.placed(m, g, self_sym_sizes, key))
GATHER = row("GatherBackward0", lambda xp, self, self_sym_sizes, dim, index, sparse_grad, key: K.take_at(self, key),
             attrs=("self_sym_sizes", "dim", "index", "sparse_grad", "key"), frees=("index",),
             self=lambda m, g, self_sym_sizes, dim, index, sparse_grad, key: F.placed(m, g, self_sym_sizes, key))
SCATTER = row("ScatterBackward0",
              lambda xp, self, src, dim, index, src_sym_sizes, key, src_key: K.scatter(xp, self, key, src[src_key], None),
              inputs=("self", "src"), attrs=("dim", "index", "src_sym_sizes", "key", "src_key"), frees=("index",),
              self=lambda m, g, dim, index, src_sym_sizes, key, src_key: F.zeroed_at(m, g, key),
              src=lambda m, g, dim, index, src_sym_sizes, key, src_key: F.to_source(m, g, key, src_sym_sizes, src_key))
SCATTER_VALUE = row("ScatterBackward1", lambda xp, self, dim, index, value, key: K.scatter(xp, self, key, value, None),
                    attrs=("dim", "index", "value", "key"), frees=("index",),
                    self=lambda m, g, dim, index, value, key: F.zeroed_at(m, g, key))
SCATTER_ADD = row("ScatterAddBackward0",
                  lambda xp, self, src, dim, index, src_sym_sizes, key, src_key:
                      K.scatter(xp, self, key, src[src_key], "sum"),
                  inputs=("self", "src"), attrs=("dim", "index", "src_sym_sizes", "key", "src_key"), frees=("index",),
                  self=lambda m, g, dim, index, src_sym_sizes, key, src_key: g,
                  src=lambda m, g, dim, index, src_sym_sizes, key, src_key:
                      F.to_source(m, g, key, src_sym_sizes, src_key))
SCATTER_REDUCE = row("ScatterReduceBackward0",
                     lambda xp, self, src, dim, index, reduce, include_self, src_sym_sizes, key, src_key:
                         K.scatter(xp, self, key, src[src_key], reduce, include_self),
                     inputs=("self", "src"), saves=("self", "src", "result"),
                     attrs=("dim", "index", "reduce", "include_self", "src_sym_sizes", "key", "src_key"),
                     frees=("index",), joint=F.scatter_reduce_backward)
# torch.scatter(..., reduce=): computed, with a node whose backward is refused, as torch's NotImplemented
SCATTER_NOT_DIFFERENTIABLE = row("engine::autograd::NotImplemented",
                                 lambda xp, self, src, key, src_key, reduce:
                                     K.scatter(xp, self, key, src[src_key] if src_key else src, reduce),
                                 inputs=("self", "src"), attrs=("key", "src_key", "reduce"),
                                 self=lambda m, g, key, src_key, reduce:
                                     F.not_implemented("derivative for aten::scatter is not implemented"),
                                 src=lambda m, g, key, src_key, reduce:
                                     F.not_implemented("derivative for aten::scatter is not implemented"))
INDEX_ADD = row("IndexAddBackward0", lambda xp, self, source, dim, index, alpha, source_sym_sizes, key:
                    K.scatter(xp, self, key, source if alpha == 1 else source * alpha, "sum"),
                inputs=("self", "source"), attrs=("dim", "index", "alpha", "source_sym_sizes", "key"), frees=("index",),
                self=lambda m, g, dim, index, alpha, source_sym_sizes, key: g,
                source=lambda m, g, dim, index, alpha, source_sym_sizes, key:
                    (F.picked(g, key) if alpha == 1 else F.picked(g, key) * alpha).reshape(source_sym_sizes))
INDEX_COPY = row("IndexCopyBackward0", lambda xp, self, source, dim, index, source_sym_sizes, key:
                     K.scatter(xp, self, key, source, None),
                 inputs=("self", "source"), attrs=("dim", "index", "source_sym_sizes", "key"), frees=("index",),
                 self=lambda m, g, dim, index, source_sym_sizes, key: F.zeroed_at(m, g, key),
                 source=lambda m, g, dim, index, source_sym_sizes, key: F.picked(g, key).reshape(source_sym_sizes))
INDEX_FILL = row("IndexFillBackward0", lambda xp, self, dim, index, value, key: K.scatter(xp, self, key, value, None),
                 attrs=("dim", "index", "value", "key"), frees=("index",),
                 self=lambda m, g, dim, index, value, key: F.zeroed_at(m, g, key))
INDEX_FILL_TENSOR = row("IndexFillBackward1", lambda xp, self, value, dim, index, key:
                            K.scatter(xp, self, key, value, None),
                        inputs=("self", "value"), attrs=("dim", "index", "key"), frees=("index",), broadcasts=True,
                        self=lambda m, g, dim, index, key: F.zeroed_at(m, g, key),
                        value=lambda m, g, dim, index, key: F.sum_all(m, F.picked(g, key)))
MASKED_FILL = row("MaskedFillBackward0", lambda xp, self, mask, value: K.masked_fill(xp, self, mask, value),
                  attrs=("mask", "value"), frees=("mask",), broadcasts=True,
                  self=lambda m, g, mask, value: m.where(mask, 0.0, g))
MASKED_FILL_TENSOR = row("MaskedFillBackward1", lambda xp, self, value, mask: K.masked_fill(xp, self, mask, value),
                         inputs=("self", "value"), attrs=("mask",), frees=("mask",), broadcasts=True,
                         self=lambda m, g, mask: m.where(mask, 0.0, g),
                         value=lambda m, g, mask: F.sum_all(m, m.where(mask, g, 0.0)))
MASKED_SELECT = row("MaskedSelectBackward0",
                    lambda xp, self, self_sym_sizes, mask, shape, key: K.take_at(xp.broadcast_to(self, shape), key),
                    attrs=("self_sym_sizes", "mask", "shape", "key"), frees=("mask",),
                    self=lambda m, g, self_sym_sizes, mask, shape, key:
                        m.sum_to(F.placed(m, g, shape, key, False), self_sym_sizes))
MASKED_SCATTER = row("MaskedScatterBackward0",
                     lambda xp, self, source, mask, source_sym_sizes, shape, key:
                         K.masked_scatter(xp, self, source, shape, key),
                     inputs=("self", "source"), attrs=("mask", "source_sym_sizes", "shape", "key"), frees=("mask",),
                     broadcasts=True,
                     self=lambda m, g, mask, source_sym_sizes, shape, key: m.where(mask, 0.0, g),
                     source=lambda m, g, mask, source_sym_sizes, shape, key:
                         F.masked_scatter_source_backward(m, g, source_sym_sizes, key))
TAKE = row("TakeBackward0", lambda xp, self, self_sym_sizes, index: xp.take(self, index),
           attrs=("self_sym_sizes", "index"), frees=("index",),
           self=lambda m, g, self_sym_sizes, index:
               m.index_grad(g, (reductions_formulas.count(self_sym_sizes, range(len(self_sym_sizes))),), index, False)
               .reshape(self_sym_sizes))
FLIP = row("FlipBackward0", lambda xp, self, dims: xp.flip(self, dims).copy(), attrs=("dims",),
           self=lambda m, g, dims: m.flip(g, dims))
ROLL = row("RollBackward0", lambda xp, self, shifts, dims: xp.roll(self, shifts, dims or None), attrs=("shifts", "dims"),
           self=lambda m, g, shifts, dims: m.roll(g, tuple(-s for s in shifts), dims))
ROT90 = row("Rot90Backward0", lambda xp, self, k, dims: xp.rot90(self, k, dims).copy(), attrs=("k", "dims"),
            self=lambda m, g, k, dims: m.rot90(g, -k, dims))
REPEAT = row("RepeatBackward0", lambda xp, self, self_sym_sizes, repeats: xp.tile(self, repeats),
             attrs=("self_sym_sizes", "repeats"), self=F.repeat_backward)
TRIL = row("TrilBackward0", lambda xp, self, diagonal: K.triangle(xp, self, diagonal, True), attrs=("diagonal",),
           self=lambda m, g, diagonal: F.triangle(m, g, diagonal, True))
TRIU = row("TriuBackward0", lambda xp, self, diagonal: K.triangle(xp, self, diagonal, False), attrs=("diagonal",),
           self=lambda m, g, diagonal: F.triangle(m, g, diagonal, False))
DIAG_EMBED = row("DiagEmbedBackward0",
                 lambda xp, self, offset, dim1, dim2: K.diag_embed(xp, self, offset, dim1, dim2),
                 attrs=("offset", "dim1", "dim2"),
                 self=lambda m, g, offset, dim1, dim2: m.diagonal(g, offset, dim1, dim2))
TRACE = row("TraceBackward0", lambda xp, self, self_sym_sizes: xp.asarray(xp.trace(self)), attrs=("self_sym_sizes",),
            self=lambda m, g, self_sym_sizes: F.diagonal_backward(
                m, m.expand(g.reshape((1,)), (min(self_sym_sizes),)), self_sym_sizes, 0, 0, 1))
# sort, topk, kthvalue: the indices are found first and arrive as the key of the values they pick
SORT = {name: row(name, lambda xp, self, self_sym_sizes, dim, indices, key: K.take_at(self, key),
                  attrs=("self_sym_sizes", "dim", "indices", "key"), frees=("indices",),
                  self=lambda m, g, self_sym_sizes, dim, indices, key: F.placed(m, g, self_sym_sizes, key, False))
        for name in ("SortBackward0", "SortBackward1")}
TOPK = row("TopkBackward0", lambda xp, self, self_sym_sizes, dim, indices, key: K.take_at(self, key),
           attrs=("self_sym_sizes", "dim", "indices", "key"), frees=("indices",),
           self=lambda m, g, self_sym_sizes, dim, indices, key: F.placed(m, g, self_sym_sizes, key, False))
KTHVALUE = row("KthvalueBackward0", lambda xp, self, self_sym_sizes, dim, keepdim, indices, key: K.take_at(self, key),
               attrs=("self_sym_sizes", "dim", "keepdim", "indices", "key"), frees=("indices",),
               self=lambda m, g, self_sym_sizes, dim, keepdim, indices, key:
                   F.placed(m, g, self_sym_sizes, key, False))
# unique: values found first; torch records a node whose derivative is not implemented
def unique_row(name: str, aten_name: str) -> Op:
    message = f"the derivative for '{aten_name}' is not implemented."
    return row(name, lambda xp, self, values: values, attrs=("values",),
               self=lambda m, g, values: F.not_implemented(message, NotImplementedError))


UNIQUE = {name: unique_row(name, aten) for name, aten in (("Unique2Backward0", "_unique2"),
                                                          ("UniqueDimBackward0", "unique_dim"))}

# Forward AD (ops/forward_mode.py): rows linear in their tensor inputs take their tangents through their
# own forward.
with_jvp(LINEAR, VIEW, RESHAPE_ALIAS, UNSAFE_VIEW, *SQUEEZE.values(), T, T_, TRANSPOSE, TRANSPOSE_, PERMUTE,
         EXPAND, SELECT, SLICE, ALIAS, AS_STRIDED, AS_STRIDED_VIEW, CLONE, TO_COPY, INDEX, CAT, STACK, DIAGONAL,
         DIAGONAL_COPY, UNFOLD, INDEX_SELECT, GATHER, TAKE, FLIP, ROLL, REPEAT, TRIL, TRIU, DIAG_EMBED, TRACE)
# rows torch has no forward AD for: its error
with_jvp(no_forward_ad("_unique2"), UNIQUE["Unique2Backward0"])
with_jvp(no_forward_ad("unique_dim"), UNIQUE["UniqueDimBackward0"])
