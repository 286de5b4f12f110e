# A ModelNew for KernelBench level 2 problem 1 (Conv2D_ReLU_BiasAdd): the same parameters
# created in the same order as Model's (conv, then bias), so that KernelBench's seeding gives
# both the same values; ReLU and the bias add fused into one expression.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.relu(self.conv(x)).add_(self.bias)
