"""Not autograd: a plain Python error in a helper; exit 2 with the user's frames."""

import engine


def scale(values, by):
    return [v / by for v in values]  # mark: culprit


x = engine.tensor([1.0, 2.0], requires_grad=True)
print(scale([1, 2], 0))  # mark: caller
