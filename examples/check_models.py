"""Two engine.nn models in decorated cases, checked by `gradcli check examples/check_models.py`.

`modules=(encoder, decoder)` checks the gradients of their parameters too (named
`encoder.fc.weight` ...); a case that only uses a module (`roundtrip`) runs it in float64 all
the same, so the float32 weights nn layers are made with never cause a false failure.
"""

import engine
import gradcli
from engine import nn


class Block(nn.Module):
    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return self.fc(x).tanh()


encoder = Block(4, 2)  # float32 weights, as nn layers make them
decoder = Block(2, 4)


def batch():
    return (engine.randn(3, 4, requires_grad=True),)


@gradcli.case(batch, modules=(encoder, decoder))
def autoencoder(x):
    return ((decoder(encoder(x)) - x) ** 2).mean()


@gradcli.case(batch)
def roundtrip(x):
    return decoder(encoder(x))
