"""The ops, by family: pointwise/, reductions/, shaping/, linalg/, nn/.

Each family's folder holds its rows of the derivative table (rows.py), their long formulas and
forwards (formulas.py, kernels.py) and its functional API (functions.py, and core.py for the
ops ops/inplace.py builds on); derivatives.py gathers the rows into the table.

Importing the package, or a family's, loads nothing: a submodule low in the layers (a family's
kernels, namespaces.py, below the executor) must not pull in the ops above it.
engine/__init__.py installs the Tensor methods.
"""
