"""engine.nn.functional: PyTorch's torch.nn.functional for the supported subset."""

from .activation import gelu, leaky_relu, log_softmax, relu, relu_, sigmoid, softmax, tanh
from .conv import conv1d, conv2d, fold, unfold
from .dropout import dropout
from .linear import linear
from .loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from .normalization import batch_norm, layer_norm
from .padding import pad
from .pooling import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from .sparse import embedding

__all__ = [
    "avg_pool1d",
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "cross_entropy",
    "dropout",
    "embedding",
    "fold",
    "gelu",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "max_pool1d",
    "max_pool2d",
    "mse_loss",
    "nll_loss",
    "pad",
    "relu",
    "relu_",
    "sigmoid",
    "smooth_l1_loss",
    "softmax",
    "tanh",
    "unfold",
]
