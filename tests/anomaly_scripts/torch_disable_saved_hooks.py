"""disable_saved_tensors_hooks around a forward: valid torch, which any saved-tensor hook breaks."""

import torch
from torch.autograd.graph import disable_saved_tensors_hooks


def main():
    torch.manual_seed(0)
    weight = torch.randn(3, requires_grad=True)
    with disable_saved_tensors_hooks("this model's activations are not to be hooked"):
        loss = (weight * weight).sin().sum()  # mark: unwatched
    loss.backward()
    print("grad", [round(v, 4) for v in weight.grad.tolist()])


if __name__ == "__main__":
    main()
