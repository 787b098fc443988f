"""A float32 tensor the float64 check cannot widen: made inside the function. The case fails with a
problem of kind DTYPE naming `w`, its line, and the fix."""

import engine
import gradcli


@gradcli.case(engine.randn(4, 3, requires_grad=True))
def made_inside(x):
    w = engine.ones(3, 2)
    return x @ w
