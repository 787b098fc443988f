import torch

import gradcli

mlp = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.Linear(8, 2))


@gradcli.case(lambda: (torch.randn(4, 6, requires_grad=True),), modules=mlp)
def run_mlp(x):
    return mlp(x).logsumexp(dim=1).mean()
