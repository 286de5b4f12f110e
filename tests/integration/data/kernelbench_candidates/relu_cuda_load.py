# A ModelNew that writes its CUDA source (with its own pybind11 module) next to itself when
# imported and builds it with torch.utils.cpp_extension.load. On a GPU node: PASSED, the compile
# stage building it with kiln's light header and the worker loading that build.
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load

SOURCE = r"""
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("relu_cuda", &relu_cuda, "ReLU"); }
"""

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "relu_kernel.cu")
with open(path, "w") as f:
    f.write(SOURCE)
relu = load(name="relu_cuda_load", sources=[path], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu.relu_cuda(x.contiguous())
