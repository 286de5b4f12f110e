# A ModelNew for KernelBench level 2 problem 1 (Conv2D_ReLU_BiasAdd): the convolution by cuDNN
# through torch, ReLU and the bias add fused into one Triton kernel over its output. Parameters
# are created in Model's order (conv, then bias), so they hold Model's values.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_bias_kernel(y_ptr, bias_ptr, out_ptr, n, hw, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    c = (offs // hw) % channels
    b = tl.load(bias_ptr + c, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(y, 0.0) + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.conv(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        hw = y.shape[2] * y.shape[3]
        relu_bias_kernel[(triton.cdiv(n, 1024),)](y, self.bias, out, n, hw, y.shape[1],
                                                  BLOCK=1024)
        return out
