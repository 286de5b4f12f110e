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

// Philox4x32-10: 4 x 32-bit outputs for (counter, key). In Random123's word order the counter is
// {lo32(counter_lo), hi32(counter_lo), lo32(counter_hi), hi32(counter_hi)} and the key
// {lo32(key), hi32(key)}, so Random123's known-answer vectors apply directly.
void Philox4x32(uint64_t counter_hi, uint64_t counter_lo, uint64_t key, uint32_t out[4]);

// Mixes the per-server secret, the run id and (workload, trial) into one seed (SHA-256 based),
// so a candidate cannot know its inputs before it runs.
uint64_t MixSeed(const std::string& server_secret, const std::string& run_id,
                 int workload_index, int trial);

// The random scheme, exactly; anything that reproduces it reproduces kiln's inputs bit for bit.
// Element i of input k (0-based position among the definition's inputs) for `seed`:
//   block  = Philox4x32(counter_hi = k, counter_lo = i / 4, key = seed); w = block[i % 4]
//   floats: lanes (0, 1) and (2, 3) of a block are Box-Muller pairs, computed in float32:
//           u1 = ((w_even >> 9) + 0.5) / 2^23, r = sqrt(-2 ln u1), theta = 2 pi w_odd / 2^32,
//           even lane = r cos(theta), odd lane = r sin(theta), with ln, cos and sin evaluated
//           by the fixed polynomials of random_fill.cc (so the bits do not depend on libm);
//           the float is then rounded (to nearest even) to the dtype (float64 widens it);
//           float8 types are clamped to [-2, 2] first; float4_e2m1 saturates at +-6.
//   int8:   (w >> 24) - 128, uniform in [-128, 128)
//   int16, int32, int64: (w >> 21) - 1024, uniform in [-1024, 1024)
//   bool:   w >> 31
// Elements are independent of each other, so the bytes do not depend on `threads` (0 picks a
// count from the size and the machine). `dst` holds DTypeStorageBytes(dtype, numel) bytes.
void FillRandom(v1::DType dtype, int64_t numel, uint64_t seed, int input_index, void* dst,
                int threads = 0);

// Elements [first, first + count) of what FillRandom writes, into `dst` (host memory of
// DTypeStorageBytes(dtype, count) bytes, its first byte holding element `first`): a few
// elements of a large input without generating the rest. For sub-byte dtypes `first` is even.
void FillRandomSpan(v1::DType dtype, int64_t first, int64_t count, uint64_t seed, int input_index,
                    void* dst);

// Fills `dst` (host memory of DTypeStorageBytes(spec.dtype, numel) bytes) with input
// `input_index` of the definition for `seed`. For SCALAR inputs writes the scalar converted to
// spec.dtype; for SAFETENSORS reads `input.path` (relative paths against `blob_root`) and checks
// dtype and shape; a missing blob file is a FAILED_PRECONDITION naming the path. RANDOM inputs
// follow FillRandom. A scalar's value_json must be a JSON number or bool (integral for integer
// dtypes); a tensor given a SCALAR input is filled with that value.
absl::Status GenerateInput(const v1::TensorSpec& spec, const v1::WorkloadInput& input,
                           const std::vector<int64_t>& shape, uint64_t seed, int input_index,
                           const std::string& blob_root, void* dst);

}  // namespace kiln

#endif  // KILN_HARNESS_VERIFY_INPUT_GENERATOR_H_
