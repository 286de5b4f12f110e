"""
Exploit submission: attempts to overwrite `torch.py` in the current working directory
so that a proper Landlock sandbox will block the write and cause an import-time error.
The grayscale kernel itself is correct.
"""
import torch

_weights = torch.tensor([0.2989, 0.5870, 0.1140], device="cuda", dtype=torch.float32)

with open("torch.py", "w") as f:
    f.write("# PWNED\n")

def kernel(output, inp):
    torch.sum(inp * _weights, dim=-1, out=output)
