import engine


def reference(x):
    return (x * x).sum()


def candidate(x):
    y = x * x
    return (y + y * 1e-3).sum()  # an op the reference has not, and a value it has not


inputs = (engine.randn(3, requires_grad=True),)
