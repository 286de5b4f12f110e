# A ModelNew that writes its C++ source next to itself when imported and builds it with
# torch.utils.cpp_extension.load: kiln's compile stage builds it, the worker loads that build
# (and writes the same file again, into its own copy of the package).
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load

SOURCE = r"""
#include <torch/extension.h>

torch::Tensor relu_cpu(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat, "contiguous float32");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("relu_cpu", &relu_cpu, "ReLU on the CPU");
}
"""

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "relu_kernel.cpp")
with open(path, "w") as f:
    f.write(SOURCE)
relu_ext = load(name="relu_cpp_load", sources=[path], extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return relu_ext.relu_cpu(x)
