"""The shaping family: views, copies, indexing, joining and splitting, gather/scatter, sorting.

`rows.py` its rows of the derivative table, `formulas.py` their backward formulas longer than a
line, `kernels.py` their forwards longer than one expression. The functional API is in two
layers: `core.py` (views, indexing, cat/stack, clone) sits below ops/inplace.py, which builds
on it, and `functions.py` (split, gather/scatter, sort, flip, tril, unique, ...) above it.
Below `core.py`: `indexing.py` (an index key read as torch reads it) and `dtype_views.py`
(`Tensor.view(dtype)`).
"""
