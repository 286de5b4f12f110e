// integrity.no_own_kernel's parts (own_kernels.h): the kernels a solution's sources define, the
// function a profiler's kernel name denotes, and the finding.
#include "harness/verify/own_kernels.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace kiln::integrity {
namespace {

v1::Solution SolutionOf(const std::vector<std::pair<std::string, std::string>>& files) {
  v1::Solution s;
  for (const auto& [path, content] : files) {
    v1::SourceFile* f = s.add_sources();
    f->set_path(path);
    f->set_content(content);
  }
  return s;
}

// Names as CUPTI reports them (mangled by g++'s Itanium ABI, as nvcc's host side).
constexpr char kTorchClamp[] =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_5ClampENS0_5ArrayIPcLi2EEEEEviT0_T1_";
constexpr char kCublas[] =
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas";

TEST_CASE("profiler kernel names: demangled to the function, namespaces kept") {
  CHECK(KernelFunctionName("_Z11relu_kernelPKfPfi") == "relu_kernel");
  CHECK(KernelFunctionName(kTorchClamp) == "at::native::vectorized_elementwise_kernel");
  CHECK(KernelFunctionName("_ZN2kb3ops11diag_kernelIfEEvPKT_PS2_l") == "kb::ops::diag_kernel");
  CHECK(KernelFunctionName("_ZN12_GLOBAL__N_19my_kernelEPf") == "my_kernel");
  CHECK(KernelFunctionName("relu_kernel") == "relu_kernel");  // Triton: not mangled
  CHECK(KernelFunctionName(kCublas) == kCublas);
}

TEST_CASE("the kernels a solution's sources define: Triton jit functions and CUDA __global__") {
  const v1::Solution s = SolutionOf({
      {"model_new.py",
       "import triton\nimport triton.language as tl\n"
       "@triton.autotune(\n    configs=[triton.Config({'B': 128})],\n    key=['n'],\n)\n"
       "@triton.jit\ndef fused_relu(x_ptr, n, B: tl.constexpr):\n    pass\n\n"
       "@jit\ndef other_kernel(x):\n    pass\n\n"
       "def helper(x):\n    return x\n"
       "cuda_src = '''\nnamespace kb { namespace ops {\ntemplate <typename T>\n"
       "__global__ void __launch_bounds__(256) diag_kernel(const T* a, T* b, long n) {}\n}}\n"
       "extern \"C\" __global__ void plain(float* x) {}\n'''\n"},
      {"kernel.cu", "__global__\nvoid\nrelu_kernel(const float* x, float* y, int n) { }\n"
                    "__device__ float helper_device(float x) { return x; }\n"},
  });
  const SourceKernels own = KernelsOfSources(s);
  CHECK(own.kernels ==
        std::set<std::string>{"fused_relu", "other_kernel", "diag_kernel", "plain", "relu_kernel"});
  CHECK(own.namespaces.count("kb") == 1);
  CHECK(own.namespaces.count("ops") == 1);

  CHECK(IsOwnKernel("_Z11relu_kernelPKfPfi", own));
  CHECK(IsOwnKernel("_ZN2kb3ops11diag_kernelIfEEvPKT_PS2_l", own));
  CHECK(IsOwnKernel("fused_relu", own));
  CHECK(IsOwnKernel("fused_relu_0d1d2de", own));  // an older Triton's specialization suffix
  CHECK_FALSE(IsOwnKernel("fused_relu_extra", own));
  CHECK_FALSE(IsOwnKernel(kTorchClamp, own));
  CHECK_FALSE(IsOwnKernel(kCublas, own));
}

TEST_CASE("a Triton function named like torch's kernel does not make torch's kernel its own") {
  const SourceKernels own = KernelsOfSources(
      SolutionOf({{"m.py", "@triton.jit\ndef vectorized_elementwise_kernel(x):\n    pass\n"}}));
  CHECK_FALSE(IsOwnKernel(kTorchClamp, own));  // at::native:: is not a namespace of its sources
}

TEST_CASE("the finding: none of the launched kernels is the solution's own") {
  const SourceKernels own = KernelsOfSources(
      SolutionOf({{"m.py", "@triton.jit\ndef relu_kernel(x):\n    pass\n"}}));
  CHECK_FALSE(NoOwnKernel({kTorchClamp, "relu_kernel"}, own).has_value());
  const std::optional<std::string> torch_only = NoOwnKernel({kTorchClamp, kCublas}, own);
  REQUIRE(torch_only.has_value());
  CHECK_THAT(*torch_only, Catch::StartsWith("the timed calls launched 2 kernels, none of them "
                                            "the solution's own (its sources define relu_kernel)") &&
                              Catch::Contains("at::native::vectorized_elementwise_kernel"));
  const std::optional<std::string> nothing = NoOwnKernel({}, KernelsOfSources(SolutionOf({})));
  REQUIRE(nothing.has_value());
  CHECK(*nothing == "the timed calls launched no kernel at all (its sources define no Triton or "
                    "CUDA kernel)");
}

TEST_CASE("where no_own_kernel applies: KernelBench or tagged definitions, Python/Triton, CUPTI") {
  v1::Solution torch_only = SolutionOf({{"model_new.py", "import torch\n"}});
  torch_only.mutable_spec()->set_language("python");
  v1::TimingResult cupti;
  cupti.set_timer("cupti");
  cupti.add_kernels(kTorchClamp);
  v1::Definition kernelbench;
  kernelbench.mutable_kernelbench()->set_level(1);

  std::optional<OwnKernelFinding> f = JudgeOwnKernel(kernelbench, torch_only, cupti);
  REQUIRE(f.has_value());
  CHECK_THAT(f->reason, Catch::StartsWith("integrity.no_own_kernel: the timed calls launched 1 "
                                          "kernel, none of them the solution's own"));
  CHECK_FALSE(f->warning_only);

  kernelbench.add_tags("kiln:allow-library:torch");
  f = JudgeOwnKernel(kernelbench, torch_only, cupti);
  REQUIRE(f.has_value());
  CHECK(f->warning_only);

  v1::Definition plain;
  CHECK_FALSE(JudgeOwnKernel(plain, torch_only, cupti).has_value());
  plain.add_tags("kiln:require-own-kernel");
  CHECK(JudgeOwnKernel(plain, torch_only, cupti).has_value());

  v1::TimingResult events = cupti;
  events.set_timer("events");  // no kernel list: not judged
  CHECK_FALSE(JudgeOwnKernel(plain, torch_only, events).has_value());
  v1::Solution native = torch_only;
  native.mutable_spec()->set_language("cuda");
  CHECK_FALSE(JudgeOwnKernel(plain, native, cupti).has_value());
  v1::Solution triton = SolutionOf({{"m.py", "@triton.jit\ndef relu_kernel(x):\n    pass\n"}});
  triton.mutable_spec()->set_language("triton");
  v1::TimingResult own = cupti;
  own.add_kernels("relu_kernel");
  CHECK_FALSE(JudgeOwnKernel(plain, triton, own).has_value());
}

}  // namespace
}  // namespace kiln::integrity
