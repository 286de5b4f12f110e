import torch
import triton
import triton.language as tl
from fla_kernels_not_installed import fused_rmsnorm


def run(hidden_states, weight, output):
    output.copy_(fused_rmsnorm(hidden_states, weight, 1e-5))
