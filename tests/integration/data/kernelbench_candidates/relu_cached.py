# A ModelNew for ReLU that computes once and replays its first output for every later call:
# an output cache. kiln's fresh input sets (every trial and recheck draws get_inputs() anew)
# must catch it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cached = None

    def forward(self, x):
        if self.cached is None:
            self.cached = torch.relu(x).clone()
        return self.cached.clone()
