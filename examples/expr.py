"""The worked example of the seed notes, drawn by `gradcli graph examples/expr.py`.

Plain Python, no cases: `gradcli graph` draws every top-level tensor with a grad_fn that no
other top-level result consumes (here `loss`), with the variable names below on its nodes.
"""

import engine as torch

inp = torch.ones([2, 2], requires_grad=True)
w1 = torch.tensor(2.0, requires_grad=True)
w2 = torch.tensor(3.0, requires_grad=True)
w3 = torch.tensor(4.0, requires_grad=True)

l1 = inp * w1
l2 = l1 + w2
l3 = l1 * w3
l4 = l2 * l3
loss = l4.mean()
