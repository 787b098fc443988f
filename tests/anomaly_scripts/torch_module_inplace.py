"""inplace-modified-saved inside nn.Sequential: Sigmoid saves its output, ReLU(inplace=True) overwrites it."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid(), nn.ReLU(inplace=True))
X = torch.randn(5, 3)
out = model(X)  # mark: model
out.sum().backward()  # mark: backward
