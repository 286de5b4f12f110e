# A ModelNew whose load_inline C++ has a syntax error (a missing semicolon): a COMPILE_ERROR
# naming the compiler's first error and this file's line that called load_inline, after one
# compile of the unit (torch's full header cannot cure a syntax error).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
torch::Tensor relu_cpu(torch::Tensor x) {
    auto y = torch::empty_like(x)
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
    return y;
}
"""

relu_ext = load_inline(name="relu_cpp_syntax", cpp_sources=source, functions=["relu_cpu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu_ext.relu_cpu(x)
