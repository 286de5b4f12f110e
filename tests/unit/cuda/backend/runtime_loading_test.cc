// The CUDA runtime and CUPTI are found and every function kiln calls resolves, wherever the
// libraries are installed (no GPU needed: loading does not touch the driver).
#include <catch2/catch.hpp>
#include <string>

#include "harness/backend/cuda/cuda_runtime_api.h"
#include "harness/backend/cuda/cupti_api.h"

namespace kiln {
namespace {

TEST_CASE("the CUDA runtime and CUPTI load with every function kiln uses") {
  absl::StatusOr<const CudaRuntimeApi*> rt = LoadCudaRuntime();
  if (!rt.ok()) {
    std::printf("[cuda] runtime not installed here: %s\n", rt.status().ToString().c_str());
    CHECK_THAT(std::string(rt.status().message()), !Catch::Contains("has no symbol"));
    return;
  }
  CHECK((*rt)->GetDeviceCount != nullptr);
  CHECK((*rt)->GetDriverEntryPointByVersion != nullptr);
  CHECK(CudaErrorText(**rt, cudaErrorIllegalAddress) ==
        "an illegal memory access was encountered (cudaErrorIllegalAddress)");
  CHECK(CudaCallStatus(**rt, cudaErrorMemoryAllocation, "cudaMalloc").code() ==
        absl::StatusCode::kResourceExhausted);
  CHECK(CudaCallStatus(**rt, cudaSuccess, "cudaMalloc").ok());

  absl::StatusOr<const CuptiApi*> cupti = LoadCupti((*rt)->cudart_dir);
  if (!cupti.ok()) {
    std::printf("[cuda] CUPTI not usable here: %s\n", cupti.status().ToString().c_str());
    CHECK_THAT(std::string(cupti.status().message()), !Catch::Contains("has no symbol"));
    return;
  }
  uint32_t version = 0;
  REQUIRE((*cupti)->GetVersion(&version) == CUPTI_SUCCESS);
  CHECK(version / 10000 == CUPTI_API_VERSION / 10000);
  CHECK(CuptiResultText(**cupti, CUPTI_ERROR_NOT_INITIALIZED) == "CUPTI_ERROR_NOT_INITIALIZED");
}

}  // namespace
}  // namespace kiln
