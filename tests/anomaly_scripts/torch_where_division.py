"""nan-in-where-branch: per-class mean features, where() keeping 0 for a class missing from the batch."""

import torch
from torch.nn import functional as F

torch.manual_seed(0)
features = torch.randn(6, 3, requires_grad=True)
labels = torch.tensor([0, 0, 1, 1, 1, 0])
onehot = F.one_hot(labels, num_classes=3).float()  # class 2 is not in this batch
sums = onehot.t() @ features
counts = onehot.sum(0).unsqueeze(1)
means = sums / counts  # mark: divide
means = torch.where(counts > 0, means, torch.zeros_like(means))  # mark: where
loss = means.pow(2).sum()
loss.backward()  # mark: backward
