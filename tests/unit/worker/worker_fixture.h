// Shared by the kiln-worker tests: a library of small host solutions (one per behaviour, all in
// one shared object compiled once per test run), a vector-add definition and a bfloat16 one,
// and a private job folder per test.
#ifndef KILN_TESTS_UNIT_WORKER_WORKER_FIXTURE_H_
#define KILN_TESTS_UNIT_WORKER_WORKER_FIXTURE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/worker/worker_client.h"
#include "kiln/v1/types.pb.h"
#include "kiln/v1/worker.pb.h"

namespace kiln::testing {

// Path of the compiled test solutions (built on first use; fails the test when g++ fails).
const std::string& TestSolutionLibrary();

// vector_add: axes n (var); inputs a, b float32 [n]; output c float32 [n].
v1::Definition VectorAddDefinition();
// widen_bf16: axes n (var); input x bfloat16 [n], scalar input scale float32; output y float32
// [n] = scale * x.
v1::Definition WidenBf16Definition();
// A workload with axis n and every tensor input random (scalars take `scalar_json`).
v1::Workload RandomWorkload(const v1::Definition& def, int64_t n,
                            const std::string& scalar_json = "2.0");

class WorkerJob {
 public:
  WorkerJob();
  ~WorkerJob();
  WorkerJob(const WorkerJob&) = delete;
  WorkerJob& operator=(const WorkerJob&) = delete;

  const std::string& dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/worker.log"; }
  std::string output_dir() const { return dir_ + "/out"; }

  // A verify-only request for `symbol` of the test library with the given trial seeds.
  v1::WorkerRequest Request(const v1::Definition& def, const v1::Workload& workload,
                            const std::string& symbol, std::vector<uint64_t> seeds = {11, 22},
                            const std::string& role = "candidate") const;
  WorkerLaunch Launch(double timeout_s = 60) const;
  // RunWorker with this job's launch; fails the test when the worker cannot be started.
  v1::WorkerResult Run(const v1::WorkerRequest& request, double timeout_s = 60,
                       const std::function<void(const v1::WorkerStatus&)>& on_status = nullptr,
                       const std::atomic<bool>* cancel = nullptr) const;
  std::string ReadLog() const;

 private:
  std::string dir_;
};

// The raw bytes of an output file.
std::string ReadBytes(const std::string& path);
// Floats of a float32 output file.
std::vector<float> ReadFloats(const std::string& path);
// Input `index` of `def` for `seed`, as GenerateInput produces it.
std::string GeneratedInput(const v1::Definition& def, const v1::Workload& workload, int index,
                           uint64_t seed);

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_WORKER_WORKER_FIXTURE_H_
