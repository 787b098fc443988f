"""Causal self-attention: the -inf that masked_fill writes is meant, and softmax turns it into 0s.
With every key of a row masked, that row's softmax is 0/0 = nan: the first NaN of the forward."""

import sys

import torch

torch.manual_seed(0)
q = torch.randn(2, 4, 8, requires_grad=True)
scores = q @ q.transpose(1, 2) / 8**0.5
mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)
if "--mask-everything" in sys.argv:
    mask[0] = True
scores = scores.masked_fill(mask, float("-inf"))
scores = scores + 0.5  # the mask is carried: -inf + 0.5
attn = scores.softmax(-1)  # mark: culprit
loss = (attn @ q).sum()
loss.backward()
print(f"loss {loss.item():.4f}")
