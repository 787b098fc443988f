"""nan-in-backward in a worker thread: the thread dies of the error, the main thread goes on."""

import threading

import torch


def train_step(weight, mask):
    loss = (weight.sqrt() * mask).sum()  # mark: culprit
    loss.backward()  # mark: backward


def main():
    weight = torch.tensor([0.0, 4.0], requires_grad=True)
    worker = threading.Thread(target=train_step, args=(weight, torch.tensor([0.0, 1.0])))
    worker.start()
    worker.join()
    print("main thread done")


if __name__ == "__main__":
    main()
