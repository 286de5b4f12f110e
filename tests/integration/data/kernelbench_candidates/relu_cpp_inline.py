# A KernelBench-style ModelNew for ReLU whose kernel is C++ built with load_inline: CPU only.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
torch::Tensor relu_cpu(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat, "contiguous float32");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
    return y;
}
"""

relu_ext = load_inline(name="relu_cpp_inline", cpp_sources=source, functions=["relu_cpu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu_ext.relu_cpu(x)
