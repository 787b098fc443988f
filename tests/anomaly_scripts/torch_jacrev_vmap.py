"""Per-example Jacobians with vmap over jacrev: batched tensors, and saved-tensor hooks disabled."""

import torch
from torch.func import jacrev, vmap


def predict(weight, x):
    return torch.sin(x @ weight)  # mark: unwatched


def main():
    torch.manual_seed(0)
    weight, xs = torch.randn(3, 2), torch.randn(5, 3)
    jacobians = vmap(jacrev(predict), in_dims=(None, 0))(weight, xs)
    print("jacobians", tuple(jacobians.shape), round(jacobians.sum().item(), 4))


if __name__ == "__main__":
    main()
