"""The reductions family: sum, mean, var, max and the other reductions, softmax, scans, norms.

`rows.py` its rows of the derivative table, `formulas.py` their backward formulas longer than a
line, `kernels.py` their forwards longer than one expression. The functional API is in two
layers: `core.py` (sum, mean, var, std, max, min, maximum, argmax, all, any, softmax, ...)
sits below ops/inplace.py and the pointwise family, which build on it; `functions.py` (prod,
scans, logsumexp, median, mode, norms) above them.
"""
