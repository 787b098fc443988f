"""backward-twice in a GAN step: the discriminator's loss is backwarded through the generator's output."""

import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2), nn.Tanh())
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
criterion = nn.BCEWithLogitsLoss()
real_data = torch.randn(64, 2) * 0.5 + 1.0

for _ in range(3):
    real = real_data[torch.randint(0, 64, (16,))]
    fake = G(torch.randn(16, 8))  # mark: fake

    opt_D.zero_grad()
    loss_D = criterion(D(real), torch.ones(16, 1)) + criterion(D(fake), torch.zeros(16, 1))  # mark: d loss
    loss_D.backward()  # mark: first
    opt_D.step()

    opt_G.zero_grad()
    loss_G = criterion(D(fake), torch.ones(16, 1))
    loss_G.backward()  # mark: second
    opt_G.step()
