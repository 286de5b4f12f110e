// ParsePtxasResources on ptxas output captured from nvcc 13.0 and on the older format.
#include "harness/compile/kernel_resources.h"

#include <catch2/catch.hpp>
#include <string>

#include "nlohmann/json.hpp"

namespace kiln {
namespace {

// nvcc 13.0, -gencode sm_90a: a templated kernel with shared memory, an extern "C" kernel with a
// stack frame, and a plain one.
constexpr char kNvcc13Log[] = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN2ns4tmplILi128EEEvPf' for 'sm_90a'
ptxas info    : Function properties for _ZN2ns4tmplILi128EEEvPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 512 bytes smem
ptxas info    : Compile time = 14.651 ms
ptxas info    : Compiling entry function 'spill' for 'sm_90a'
ptxas info    : Function properties for spill
    1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 31 registers, used 0 barriers, 1024 bytes cumulative stack size
ptxas info    : Compile time = 10.621 ms
ptxas info    : Compiling entry function '_Z3addPKfS0_Pfi' for 'sm_90a'
ptxas info    : Function properties for _Z3addPKfS0_Pfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers
ptxas info    : Compile time = 1.290 ms
)";

// nvcc 13.0 with two architectures: spills, constant banks and a non-inlined device function.
constexpr char kTwoArchLog[] = R"(ptxas info    : 0 bytes gmem, 256 bytes cmem[3]
ptxas info    : Compiling entry function '_Z5heavyPfi' for 'sm_80'
ptxas info    : Function properties for _Z5heavyPfi
    6400 bytes stack frame, 7184 bytes spill stores, 11824 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 6400 bytes cumulative stack size, 364 bytes cmem[0]
ptxas info    : Compile time = 333.756 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z5heavyPfi' for 'sm_90a'
ptxas info    : Function properties for _Z5heavyPfi
    6400 bytes stack frame, 7164 bytes spill stores, 11804 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 6400 bytes cumulative stack size
ptxas info    : Compile time = 344.141 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";

TEST_CASE("ptxas output of nvcc 13 gives registers, shared memory and stack per kernel") {
  std::vector<KernelResources> kernels = ParsePtxasResources(kNvcc13Log);
  REQUIRE(kernels.size() == 3);
  CHECK(kernels[0].name == "_ZN2ns4tmplILi128EEEvPf");
  CHECK(kernels[0].demangled == "void ns::tmpl<128>(float*)");
  CHECK(kernels[0].arch == "sm_90a");
  CHECK(kernels[0].entry);
  CHECK(kernels[0].registers == 10);
  CHECK(kernels[0].barriers == 1);
  CHECK(kernels[0].shared_bytes == 512);
  CHECK(kernels[1].demangled == "spill");  // extern "C": nothing to demangle
  CHECK(kernels[1].registers == 31);
  CHECK(kernels[1].stack_frame_bytes == 1024);
  CHECK(kernels[1].cumulative_stack_bytes == 1024);
  CHECK(kernels[2].demangled == "add(float const*, float const*, float*, int)");
  CHECK(kernels[2].registers == 12);
  CHECK(kernels[2].shared_bytes == 0);
}

TEST_CASE("spills, constant banks and device functions are kept per architecture") {
  std::vector<KernelResources> kernels = ParsePtxasResources(kTwoArchLog);
  REQUIRE(kernels.size() == 4);
  CHECK(kernels[0].arch == "sm_80");
  CHECK(kernels[0].spill_store_bytes == 7184);
  CHECK(kernels[0].spill_load_bytes == 11824);
  CHECK(kernels[0].stack_frame_bytes == 6400);
  CHECK(kernels[0].constant_bytes == 364);
  CHECK_FALSE(kernels[1].entry);
  CHECK(kernels[1].demangled == "helper(float*, int)");
  CHECK(kernels[1].arch == "sm_80");
  CHECK(kernels[2].arch == "sm_90a");
  CHECK(kernels[2].spill_store_bytes == 7164);
  CHECK(kernels[2].registers == 32);
  CHECK(kernels[3].arch == "sm_90a");
  CHECK_FALSE(kernels[3].entry);
}

TEST_CASE("the older ptxas format with summed shared memory and several cmem banks parses") {
  const char* log =
      "kernel.cu(3): warning: something harmless\n"
      "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_70'\n"
      "ptxas info    : Function properties for _Z1kPf\n"
      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 40 registers, 16+16 bytes smem, 380 bytes cmem[0], 4 bytes cmem[2]\n";
  std::vector<KernelResources> kernels = ParsePtxasResources(log);
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].registers == 40);
  CHECK(kernels[0].shared_bytes == 32);
  CHECK(kernels[0].constant_bytes == 384);
  CHECK(kernels[0].spill_store_bytes == 4);
}

TEST_CASE("a log without ptxas lines has no kernels") {
  CHECK(ParsePtxasResources("").empty());
  CHECK(ParsePtxasResources("main.cu(1): error: expected a ';'\n1 error detected\n").empty());
}

TEST_CASE("kernel resources render as one line each and as JSON") {
  std::vector<KernelResources> kernels = ParsePtxasResources(kTwoArchLog);
  std::string text = RenderKernelResources(kernels);
  CHECK_THAT(text, Catch::Contains("sm_80 heavy(float*, int): 32 registers, 0 B shared, 6400 B "
                                   "stack, 7184 B spill stores, 11824 B spill loads, 364 B "
                                   "constant\n"));
  CHECK_THAT(text, Catch::Contains("sm_80 helper(float*, int) [device function]: 0 B stack"));
  nlohmann::json json = nlohmann::json::parse(KernelResourcesJson(kernels));
  REQUIRE(json.size() == 4);
  CHECK(json[0]["name"] == "_Z5heavyPfi");
  CHECK(json[0]["spill_load_bytes"] == 11824);
  CHECK(json[1]["entry"] == false);
}

}  // namespace
}  // namespace kiln
