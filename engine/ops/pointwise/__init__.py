"""The pointwise family: arithmetic, elementwise math, comparisons, the plain pointwise activations.

`rows.py` its rows of the derivative table, `formulas.py` their backward formulas longer than a
line, `kernels.py` their forwards longer than one expression (erf, exact rounding and division,
torch's integer rules). The functional API is in two layers: `core.py` (add, mul, div, pow,
the unary math, clamp, comparisons) sits below ops/inplace.py, which builds on it, and
`functions.py` (rounding, trigonometry, the binary ops of numbers, bitwise and logical ops,
closeness) above it.
"""
