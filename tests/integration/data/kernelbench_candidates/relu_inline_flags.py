# A ModelNew calling load_inline the way KernelBench's prompt example does (verbose=True,
# extra_cflags=[""], extra_ldflags=[""]), C++ only so that a CPU builds it, with more of what
# torch's load_inline accepts: functions as a dict of docstrings, a flag given twice, -std=c++20
# after torch's own -std, and two flags in one string (torch's build.ninja joins the flags with
# spaces and the shell splits them). The #error lines fail the build if a flag did not arrive.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#if __cplusplus < 202002L
#error "the extra_cflags -std=c++20 is not the standard this unit is compiled with"
#endif
#if !defined(KILN_ONE) || KILN_TWO != 2
#error "the two flags of one extra_cflags string did not both reach the compiler"
#endif

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

relu_ext = load_inline(
    name="relu_inline_flags",
    cpp_sources=source,
    cuda_sources=None,
    functions={"relu_cpu": "ReLU of a contiguous float32 tensor"},
    verbose=True,
    extra_cflags=["", "-O2", "-O2", "-std=c++20", "-DKILN_ONE -DKILN_TWO=2"],
    extra_ldflags=[""],
)

if "ReLU of a contiguous float32 tensor" not in (relu_ext.relu_cpu.__doc__ or ""):
    raise RuntimeError(f"relu_cpu's docstring is not the functions dict's: "
                       f"{relu_ext.relu_cpu.__doc__!r}")


class ModelNew(nn.Module):
    def forward(self, x):
        return relu_ext.relu_cpu(x)
