"""Ordinary torch layers checked in both modes: the ones forward-mode AD runs pass in both, the
ones it cannot run (multi-head attention's fused kernel, cdist) keep their reverse-mode verdict
with a note (tests/check/test_check_modes.py)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

import gradcli

torch.manual_seed(0)
lstm = nn.LSTM(3, 4, batch_first=True).double()
mha = nn.MultiheadAttention(4, 2, batch_first=True).double().eval()
bn = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.ReLU(inplace=True)).double().eval()
emb = nn.Embedding(10, 3).double()
conv = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.MaxPool2d(2), nn.GELU()).double()
idx = torch.tensor([1, 4, 4, 7])


@gradcli.case(lambda: (torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True),), modules=(lstm,))
def lstm_case(x):
    return lstm(x)[0]


@gradcli.case(lambda: (torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True),), modules=(mha,))
def attention(x):
    return mha(x, x, x, need_weights=False)[0]


@gradcli.case(lambda: (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),), modules=(bn,))
def batchnorm_eval(x):
    return bn(x)


@gradcli.case(lambda: (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),), modules=(emb,))
def embedding(x):
    return emb(idx) * x


@gradcli.case(lambda: (torch.randn(1, 1, 4, 4, dtype=torch.float64, requires_grad=True),), modules=(conv,))
def convnet(x):
    return conv(x)


@gradcli.case(lambda: (torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True),))
def sdpa(x):
    return F.scaled_dot_product_attention(x, x, x)


@gradcli.case(lambda: (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),))
def masked(x):
    y = x.clone()
    y.masked_fill_(x > 0.5, 0.0)
    return torch.cdist(y, x)
