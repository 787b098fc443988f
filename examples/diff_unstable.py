"""A formula that overflows in float32: `gradcli diff examples/diff_unstable.py --against float64`."""

import engine


def f(x):
    return (1 + x.exp()).log().sum()  # softplus as written; engine.nn.functional.softplus is stable


inputs = (engine.tensor([-3.0, 0.5, 20.0, 100.0], requires_grad=True),)
