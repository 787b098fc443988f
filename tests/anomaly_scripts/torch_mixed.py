"""An engine tensor and a torch tensor in one op."""

import torch

import engine

a = engine.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([1.0, 2.0], requires_grad=True)
c = torch.mul(b, a)  # mark: culprit
