# A ModelNew that misspells a load_inline argument (extra_cuda_flags for extra_cuda_cflags):
# torch's load_inline raises TypeError, and so does kiln's, with torch's words.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
torch::Tensor relu_cpu(torch::Tensor x) { return x.clamp_min(0); }
"""

relu_ext = load_inline(name="relu_cpp_bad_keyword", cpp_sources=source, functions=["relu_cpu"],
                       extra_cuda_flags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu_ext.relu_cpu(x)
