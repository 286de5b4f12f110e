// libFuzzer target: the protobuf entry points that take untrusted bytes.
//   - the worker pipe: length-prefixed frames a (hostile) worker writes, read by ReadFramed, and
//     the claims of its WorkerResult checked against the request (CheckResultClaims);
//   - an EvaluateRequest from a client, through the validators admission runs on it.
// The first byte picks the entry point.
#include <google/protobuf/stubs/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/model/json_interop.h"
#include "harness/model/validate.h"
#include "harness/worker/worker_client.h"
#include "kiln/v1/harness.pb.h"
#include "kiln/v1/worker.pb.h"

namespace {

constexpr uint32_t kMaxFrameBytes = 1 << 16;

// Feeds `bytes` to ReadFramed through a pipe, as the harness reads a worker.
void ReadWorkerFrames(const uint8_t* bytes, size_t size) {
  int fds[2];
  if (::pipe(fds) != 0) return;
  // A pipe holds 64 KiB; libFuzzer's default -max_len stays far below.
  size = std::min<size_t>(size, 60000);
  if (::write(fds[1], bytes, size) != static_cast<ssize_t>(size)) size = 0;
  ::close(fds[1]);
  kiln::v1::WorkerRequest request;
  kiln::v1::WorkerResult result;
  if (kiln::ReadFramed(fds[0], &request, kMaxFrameBytes) &&
      kiln::ReadFramed(fds[0], &result, kMaxFrameBytes)) {
    (void)kiln::CheckResultClaims(request, result);
  }
  kiln::v1::WorkerStatus status;
  while (kiln::ReadFramed(fds[0], &status, kMaxFrameBytes)) {
  }
  ::close(fds[0]);
}

void ValidateRequest(const uint8_t* bytes, size_t size) {
  kiln::v1::EvaluateRequest request;
  if (!request.ParseFromArray(bytes, static_cast<int>(size))) return;
  // A definition with a var axis, two inputs and a scalar, so that workloads have work to check.
  static const kiln::v1::Definition def = *kiln::ParseDefinitionJson(R"({
    "name": "fuzz_add", "op_type": "elementwise",
    "axes": {"n": {"type": "var"}, "h": {"type": "const", "value": 4}},
    "inputs": {"a": {"shape": ["n", "h"], "dtype": "float32"},
               "b": {"shape": ["n", "h"], "dtype": "bfloat16"},
               "eps": {"shape": null, "dtype": "float32"}},
    "outputs": {"c": {"shape": ["n", "h"], "dtype": "float32"}},
    "reference": "def run(a, b, eps):\n    return a + b\n"})");
  kiln::Limits limits;
  limits.max_workload_bytes = 1 << 20;
  (void)kiln::ValidateSolution(def, request.solution(), limits);
  for (const kiln::v1::Workload& w : request.workloads()) {
    (void)kiln::ValidateWorkload(def, w, limits);
  }
}

}  // namespace

// Invalid UTF-8 in string fields is refused with a log line per input: keep the output readable.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (data[0] % 2 == 0) {
    ReadWorkerFrames(data + 1, size - 1);
  } else {
    ValidateRequest(data + 1, size - 1);
  }
  return 0;
}
