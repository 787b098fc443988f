"""torch.func.grad: torch disables saved-tensor hooks inside it; the script runs as under python."""

import torch
from torch.func import grad


def loss_fn(weight, x):
    return (x @ weight).tanh().pow(2).mean()  # mark: unwatched


def main():
    torch.manual_seed(0)
    weight, x = torch.randn(3), torch.randn(4, 3)
    g = grad(loss_fn)(weight, x)
    print("grad", [round(v, 4) for v in g.tolist()])


if __name__ == "__main__":
    main()
