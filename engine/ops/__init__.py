"""The ops: the derivative table (derivatives.py) and the functions that apply it.

Importing the package loads nothing: a submodule low in the layers (namespaces.py, below the
executor) must not pull in the ops above it. engine/__init__.py installs the Tensor methods.
"""
