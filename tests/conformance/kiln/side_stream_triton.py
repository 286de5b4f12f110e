# A Triton ModelNew for ReLU that launches its kernel on a private stream and never joins it to
# the caller's: the output is returned before it is written. KernelBench's own
# non_default_stream kernel does the same with cuBLAS.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stream = None

    def forward(self, x):
        if self.stream is None:
            self.stream = torch.cuda.Stream()
        y = torch.empty_like(x)
        n = x.numel()
        with torch.cuda.stream(self.stream):
            for _ in range(4):  # long enough to outlive the caller's stream
                relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
