"""engine.autograd: the graph machinery, with PyTorch's public names."""

from . import anomaly, forward_ad, functional, grad_mode, graph, profiler
from .anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .backward import AccumulateGrad, backward, grad
from .function import Function, FunctionCtx
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, GradcheckReport, PairReport, check_gradients, gradcheck, gradgradcheck
from .node import Node
from .variable import Variable

__all__ = [
    "AccumulateGrad",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "GradcheckReport",
    "Node",
    "PairReport",
    "Variable",
    "anomaly",
    "backward",
    "check_gradients",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "grad_mode",
    "graph",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "profiler",
    "set_detect_anomaly",
    "set_grad_enabled",
]
