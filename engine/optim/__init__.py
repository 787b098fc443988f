"""engine.optim: torch.optim's optimizers, with the same update equations, and lr_scheduler."""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "lr_scheduler",
]
