"""The layer classes of engine.nn, one file per kind."""

from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .pooling import AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .sparse import Embedding

__all__ = [
    "AvgPool1d",
    "AvgPool2d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv1d",
    "Conv2d",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Flatten",
    "GELU",
    "Identity",
    "L1Loss",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool1d",
    "MaxPool2d",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "SmoothL1Loss",
    "Softmax",
    "Tanh",
    "Unflatten",
]
