// Reproducible inputs. Every element comes from a counter-based generator (Philox4x32-10) keyed
// by (seed, input index) and indexed by element, so any process that knows the seed produces
// the same bytes, in any order, on any backend. Distributions follow flashinfer-bench: randn for
// floats; fp8 randn clamped to +-2; int8 uniform in [-128, 128); other ints in [-1024, 1024);
// bool 0/1. Scalars take the workload's value. Safetensors inputs are read from their file.
#ifndef KILN_HARNESS_VERIFY_INPUT_GENERATOR_H_
#define KILN_HARNESS_VERIFY_INPUT_GENERATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// Philox4x32-10: 4 x 32-bit outputs for (counter, key).
void Philox4x32(uint64_t counter_hi, uint64_t counter_lo, uint64_t key, uint32_t out[4]);

// Mixes the per-server secret, the run id and (workload, trial) into one seed (SHA-256 based),
// so a candidate cannot know its inputs before it runs.
uint64_t MixSeed(const std::string& server_secret, const std::string& run_id,
                 int workload_index, int trial);

// Fills `dst` (host memory of DTypeStorageBytes(spec.dtype, numel) bytes) with input
// `input_index` of the definition for `seed`. For SCALAR inputs writes the scalar converted to
// spec.dtype; for SAFETENSORS reads `input.path` (relative paths against `blob_root`) and checks
// dtype and shape; a missing blob file is a FAILED_PRECONDITION naming the path.
absl::Status GenerateInput(const v1::TensorSpec& spec, const v1::WorkloadInput& input,
                           const std::vector<int64_t>& shape, uint64_t seed, int input_index,
                           const std::string& blob_root, void* dst);

}  // namespace kiln

#endif  // KILN_HARNESS_VERIFY_INPUT_GENERATOR_H_
