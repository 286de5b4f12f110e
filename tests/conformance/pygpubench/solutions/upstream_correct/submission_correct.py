"""
CONTROL: Correct grayscale kernel. Should PASS correctness checks.
"""
import torch

_weights = torch.tensor([0.2989, 0.5870, 0.1140], device="cuda", dtype=torch.float32)

def kernel(output, inp):
    torch.sum(inp * _weights, dim=-1, out=output)
