"""nan-in-backward: a softmax written by hand overflows exp for large logits (inf / inf = nan)."""

import torch

logits = torch.tensor([[100.0, 1.0, 2.0], [0.5, 3.0, 1.0]], requires_grad=True)
targets = torch.tensor([0, 1])
e = torch.exp(logits)  # mark: exp
probs = e / e.sum(1, keepdim=True)
loss = -torch.log(probs[torch.arange(2), targets]).mean()  # mark: log
loss.backward()  # mark: backward
