# A KernelBench-style ModelNew that builds its C++ kernel with load_inline in __init__ (not at
# import) and, as many published files do, falls back to torch when the build raises. kiln builds
# extensions only while the solution is imported, so the worker refuses this call; the run names
# the fallback (REJECTED integrity.exception_fallback) with the refused call, this file's line
# and why, instead of judging the torch fallback.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
torch::Tensor relu_cpu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
    return y;
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        try:
            self.ext = load_inline("relu_cpp_init_inline", source, functions=["relu_cpu"])
        except Exception:
            self.ext = None

    def forward(self, x):
        if self.ext is not None:
            return self.ext.relu_cpu(x)
        return torch.relu(x)
