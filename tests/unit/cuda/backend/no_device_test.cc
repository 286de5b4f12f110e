// The CUDA backend where no GPU (or no driver) is present: it says so, and kiln-worker still
// starts and reports it as the run's error. On a GPU node the device opens instead.
#include <catch2/catch.hpp>
#include <string>

#include "harness/backend/cuda/cuda_devices.h"
#include "harness/backend/cuda/cuda_runtime_api.h"
#include "harness/common/files.h"
#include "harness/worker/open_device.h"
#include "harness/worker/worker_client.h"
#include "tests/unit/cuda/cuda_test_support.h"

namespace kiln {
namespace {

TEST_CASE("opening the CUDA backend gives a device or says why there is none") {
  absl::StatusOr<std::unique_ptr<Device>> device = OpenDevice("cuda", 0);
  if (device.ok()) {
    CHECK((*device)->Backend() == KILN_BACKEND_CUDA);
    CHECK_FALSE((*device)->HostAccessible());
    CHECK_FALSE((*device)->DeviceName().empty());
    return;
  }
  std::printf("[cuda] no GPU here: %s\n", device.status().ToString().c_str());
  CHECK(device.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(device.status().message()), Catch::StartsWith("no CUDA device: "));
}

TEST_CASE("kiln-worker without a GPU reports the missing CUDA device as a runtime error") {
  if (OpenDevice("cuda", 0).ok()) return;  // a GPU node: unit_cuda_gpu covers the worker
  absl::StatusOr<std::string> dir = MakeTempDir("", "kiln-cuda-nodevice");
  REQUIRE(dir.ok());
  v1::WorkerRequest request;
  request.set_artifact_path(*dir + "/never-loaded.so");
  request.set_symbol("add");
  request.add_trial_seeds(1);
  request.set_backend("cuda");
  request.set_output_dir(*dir + "/out");
  WorkerLaunch launch;
  launch.worker_path = testing::KilnWorkerPath();
  launch.job_dir = *dir;
  launch.log_path = *dir + "/worker.log";
  launch.timeout_s = 60;
  absl::StatusOr<v1::WorkerResult> result = RunWorker(launch, request, nullptr, nullptr);
  (void)RemoveTree(*dir);
  REQUIRE(result.ok());
  CHECK(result->status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result->error(), Catch::StartsWith("no CUDA device: "));
}

TEST_CASE("listing the GPUs gives their compute capabilities or says why there are none") {
  absl::StatusOr<std::vector<CudaDeviceInfo>> gpus = ListCudaDevices();
  if (gpus.ok()) {
    REQUIRE_FALSE(gpus->empty());
    CHECK((*gpus)[0].compute_capability >= 50);
    CHECK((*gpus)[0].l2_bytes > 0);
    return;
  }
  CHECK(gpus.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(gpus.status().message()), Catch::StartsWith("no CUDA device: "));
}

TEST_CASE("a negative GPU index is refused naming the request field") {
  absl::StatusOr<std::unique_ptr<Device>> device = OpenDevice("cuda", -1);
  CHECK(device.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(device.status().message()), Catch::StartsWith("request.device_index"));
}

TEST_CASE("the runtime kiln loads is the one solutions link against") {
  CHECK(CudaRuntimeSoname() == "libcudart.so." + std::to_string(CUDART_VERSION / 1000));
}

}  // namespace
}  // namespace kiln
