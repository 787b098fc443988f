"""The linear-algebra family: matrix products, einsum, determinants, solves, decompositions.

`rows.py` its rows of the derivative table, `formulas.py` their backward formulas longer than a
line, `kernels.py` their forwards longer than one expression, `functions.py` the functional API.
"""
