"""autograd.functional.jacobian(vectorize=True): the backward runs on vmap's batched gradients."""

import torch
from torch.autograd.functional import jacobian


def main():
    torch.manual_seed(0)
    x = torch.randn(4)
    jac = jacobian(lambda v: v.exp() * v.sum(), x, vectorize=True)  # mark: unwatched
    print("jacobian", tuple(jac.shape), round(jac.trace().item(), 4))


if __name__ == "__main__":
    main()
