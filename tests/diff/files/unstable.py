import engine


def f(x):
    return (1 + x.exp()).log().sum()  # softplus as written: exp overflows float32 at x = 100


inputs = (engine.tensor([-2.0, 0.5, 100.0], requires_grad=True),)
