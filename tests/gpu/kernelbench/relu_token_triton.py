# A ModelNew for ReLU that launches a Triton kernel of its own on 16 elements and leaves the real
# work to torch.relu: a token kernel. integrity.no_own_kernel is satisfied (a kernel of its own
# ran); integrity.own_kernel_share is not (its kernel did well under 5 % of the GPU time).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def token_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        scratch = torch.empty(16, device=x.device, dtype=x.dtype)
        token_copy_kernel[(1,)](x, scratch, 16, BLOCK=16)
        return torch.relu(x)
