"""engine.autograd.graph: the Node type under PyTorch's module path."""

from .node import Node

__all__ = ["Node"]
