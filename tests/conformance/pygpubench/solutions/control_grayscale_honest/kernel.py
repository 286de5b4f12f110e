"""Honest control of pygpubench_grayscale on any device: the computation of pygpubench's
exploits/submission_correct.py (torch.sum(inp * weights, dim=-1, out=output)) with the weights
made on the input's device, since the unchanged upstream file makes them on "cuda" at import.
"""
import torch

_weights = {}


def run(x, y):
    w = _weights.get(x.device)
    if w is None:
        w = _weights[x.device] = torch.tensor([0.2989, 0.5870, 0.1140], device=x.device,
                                              dtype=torch.float32)
    torch.sum(x * w, dim=-1, out=y)
