# relu_cuda_inline_flags.py with a syntax error in its CUDA (a missing semicolon). On a GPU
# node: a COMPILE_ERROR naming this file's load_inline line and nvcc's first error
# (cuda.cu:LINE: error: expected a ";"), after one compile of cuda.cu: torch's full header is not
# tried (with four cores or more its compile, started beside the light one, is stopped).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat,
                "contiguous float32 on the GPU");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel()
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu = load_inline(name="relu_cuda_syntax", cpp_sources=cpp_source,
                   cuda_sources=cuda_source, functions=["relu_cuda"], verbose=True,
                   extra_cflags=[""], extra_ldflags=[""],
                   extra_cuda_cflags=["-O3", "--use_fast_math", "-std=c++17", "", "-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu.relu_cuda(x.contiguous())
