"""A torch.nn model in float32, checked by `gradcli check examples/torch/check_model.py`.

The check runs on float64 copies of the input and of every parameter (model.fc1.weight, ...),
put back exactly afterwards; a backward written in float32 would be too noisy to compare.
"""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


model = MLP()
inputs = (torch.randn(4, 3, requires_grad=True),)
