"""nan-in-backward, caught: the training loop skips a step whose backward fails, and goes on."""

import torch


def main():
    weight = torch.tensor([0.0, 4.0], requires_grad=True)
    mask = torch.tensor([0.0, 1.0])
    optimizer = torch.optim.SGD([weight], lr=0.1)
    skipped = 0
    for _ in range(2):
        optimizer.zero_grad()
        loss = (weight.sqrt() * mask).sum()  # mark: culprit
        try:
            loss.backward()  # mark: backward
        except RuntimeError:
            skipped += 1
            continue
        optimizer.step()
    print(f"skipped {skipped} of 2 steps")


if __name__ == "__main__":
    main()
