# A ModelNew for ReLU that copies the problem's Model and inherits its forward: the reference
# computes the outputs. kiln must name it (integrity.inherits_reference).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


class ModelNew(Model):
    pass
