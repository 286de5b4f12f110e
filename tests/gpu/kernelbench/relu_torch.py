# A ModelNew for KernelBench level 1 problem 19 (ReLU) written in torch alone: correct.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
