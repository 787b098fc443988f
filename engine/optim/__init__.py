"""engine.optim: torch.optim's SGD, Adam and AdamW, with the same update equations."""

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer"]
