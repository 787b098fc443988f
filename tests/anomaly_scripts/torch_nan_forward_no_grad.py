"""nan-in-forward (with --check-forward) while preparing data, before anything requires grad."""

import torch

features = torch.tensor([[-1.0, 2.0], [3.0, 4.0]])
scaled = torch.log(features)  # mark: culprit
print(scaled.mean(dim=0))
