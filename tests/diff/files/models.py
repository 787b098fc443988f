"""Real models written on the engine: `gradcli diff --against torch` runs them as torch."""

import engine
import gradcli
from engine import nn

mlp = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
cnn = nn.Sequential(
    nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3)
)
block = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)


@gradcli.case(lambda: (engine.randn(5, 8, requires_grad=True),), modules=mlp)
def run_mlp(x):
    return mlp(x).pow(2).mean()


@gradcli.case(lambda: (engine.randn(2, 2, 8, 8, requires_grad=True),), modules=cnn)
def run_cnn(x):
    return cnn(x).logsumexp(dim=1).mean()


@gradcli.case(lambda: (engine.randn(2, 6, 16, requires_grad=True),), modules=block)
def run_block(x):
    return block(x)
