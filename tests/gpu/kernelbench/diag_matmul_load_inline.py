# A KernelBench-style ModelNew for level 1 problem 12 (Matmul_with_diagonal_matrices_): one CUDA
# kernel, C[i, j] = A[i] * B[i, j], built with torch.utils.cpp_extension.load_inline as
# KernelBench's examples and most agents write them.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void diag_scale_kernel(const float* __restrict__ a, const float4* __restrict__ b,
                                  float4* __restrict__ c, int rows, int cols4) {
    int row = blockIdx.y;
    float s = a[row];
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < cols4; j += gridDim.x * blockDim.x) {
        float4 v = b[(long long)row * cols4 + j];
        v.x *= s; v.y *= s; v.z *= s; v.w *= s;
        c[(long long)row * cols4 + j] = v;
    }
}

torch::Tensor diag_matmul(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(b.size(1) % 4 == 0, "columns must be a multiple of 4");
    auto c = torch::empty_like(b);
    int rows = b.size(0), cols4 = b.size(1) / 4;
    dim3 grid((cols4 + 255) / 256, rows);
    diag_scale_kernel<<<grid, 256>>>(a.data_ptr<float>(),
                                     reinterpret_cast<const float4*>(b.data_ptr<float>()),
                                     reinterpret_cast<float4*>(c.data_ptr<float>()), rows, cols4);
    return c;
}
"""

cpp_source = "torch::Tensor diag_matmul(torch::Tensor a, torch::Tensor b);"

diag = load_inline(name="diag_matmul_inline", cpp_sources=cpp_source, cuda_sources=cuda_source,
                   functions=["diag_matmul"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return diag.diag_matmul(A.contiguous(), B.contiguous())
