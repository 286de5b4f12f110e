// Shared by the GPU tests: the CUDA test kernels compiled once per run, the vector_add
// definition they implement, and a private job folder per test whose requests use the CUDA
// backend on GPU 0.
#ifndef KILN_TESTS_UNIT_CUDA_GPU_GPU_FIXTURE_H_
#define KILN_TESTS_UNIT_CUDA_GPU_GPU_FIXTURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/v1/types.pb.h"
#include "kiln/v1/worker.pb.h"

namespace kiln::testing {

// The compiled test kernels (nvcc, once per run; fails the test when the build fails).
const std::string& CudaTestLibrary();

// vector_add: axis n (var); inputs a, b float32 [n]; output c float32 [n].
v1::Definition VectorAdd();
// Axis n and random a and b.
v1::Workload VectorAddWorkload(int64_t n);
// Official timing scaled down to a few calls.
v1::TimingConfig QuickOfficialTiming();

class CudaJob {
 public:
  CudaJob();
  ~CudaJob();
  CudaJob(const CudaJob&) = delete;
  CudaJob& operator=(const CudaJob&) = delete;

  // A verify-only request for `symbol` of the test kernels on vector_add of size n.
  v1::WorkerRequest Request(const std::string& symbol, int64_t n,
                            std::vector<uint64_t> seeds = {11, 22}) const;
  // RunWorker with the test's kiln-worker; fails the test when the worker cannot start.
  v1::WorkerResult Run(const v1::WorkerRequest& request, double timeout_s = 120) const;
  std::string ReadLog() const;

 private:
  std::string dir_;
};

// The floats of an output file.
std::vector<float> ReadFloats(const std::string& path);
// Input `index` of vector_add (n elements) for `seed`, as kiln-worker generates it.
std::vector<float> GeneratedInput(int64_t n, int index, uint64_t seed);

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_CUDA_GPU_GPU_FIXTURE_H_
