"""The top-level form: two modules whose parameters differ in value only (diff copies them by name)."""

import engine
from engine import nn


class Readable(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        h = self.fc(x)
        h = h * engine.sigmoid(h)
        return self.out(h).sum()


class Fused(Readable):
    def forward(self, x):
        return self.out(nn.functional.silu(self.fc(x))).sum()


reference = Readable()
candidate = Fused()  # its own random weights: the reference's are copied in
inputs = (engine.randn(5, 6, requires_grad=True),)
