#include "harness/verify/input_generator.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "harness/common/sha256.h"
#include "harness/model/dtype.h"
#include "harness/verify/safetensors.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

absl::StatusOr<int64_t> NumelOf(const v1::TensorSpec& spec, const std::vector<int64_t>& shape) {
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", spec.name(), "': negative dimension ", d));
    }
    if (d != 0 && numel > std::numeric_limits<int64_t>::max() / 8 / d) {
      return absl::InvalidArgumentError(absl::StrCat("input '", spec.name(), "': too large"));
    }
    numel *= d;
  }
  return numel;
}

// Writes a JSON scalar into every element. Integers are stored exactly (no detour through
// double) so that int64 values above 2^53 survive.
absl::Status FillScalar(const v1::TensorSpec& spec, const v1::WorkloadInput& input, int64_t numel,
                        void* dst) {
  const std::string where = absl::StrCat("input '", spec.name(), "' (scalar)");
  Json j = Json::parse(input.value_json(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": value is not JSON: ", input.value_json()));
  }
  const v1::DType t = spec.dtype();
  if (!j.is_boolean() && !j.is_number()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": value must be a number or a bool"));
  }
  if (j.is_number_float() && !DTypeIsFloat(t) && t != v1::DTYPE_BOOL) {
    const double v = j.get<double>();
    if (v != std::trunc(v)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": value ", input.value_json(),
                                                     " is not an integer but the dtype is ",
                                                     std::string(DTypeName(t))));
    }
  }
  if (t == v1::DTYPE_INT64 && j.is_number_integer()) {
    const int64_t v = j.is_number_unsigned()
                          ? static_cast<int64_t>(std::min<uint64_t>(
                                j.get<uint64_t>(), std::numeric_limits<int64_t>::max()))
                          : j.get<int64_t>();
    for (int64_t i = 0; i < numel; ++i) std::memcpy(static_cast<int64_t*>(dst) + i, &v, sizeof v);
    return absl::OkStatus();
  }
  const double v = j.is_boolean() ? (j.get<bool>() ? 1.0 : 0.0) : j.get<double>();
  for (int64_t i = 0; i < numel; ++i) StoreFromDouble(t, dst, i, v);
  return absl::OkStatus();
}

std::string BlobPath(const std::string& blob_root, const std::string& path) {
  if (path.empty() || path.front() == '/' || blob_root.empty()) return path;
  std::string rel = path;
  if (rel.rfind("./", 0) == 0) rel = rel.substr(2);
  return blob_root.back() == '/' ? blob_root + rel : blob_root + "/" + rel;
}

}  // namespace

uint64_t MixSeed(const std::string& server_secret, const std::string& run_id, int workload_index,
                 int trial) {
  Sha256 h;
  h.AddPart("kiln.input-seed.v1");
  h.AddPart(server_secret);
  h.AddPart(run_id);
  h.AddPart(std::to_string(workload_index));
  h.AddPart(std::to_string(trial));
  const std::string hex = h.HexDigest();
  return std::stoull(hex.substr(0, 16), nullptr, 16);
}

absl::Status GenerateInput(const v1::TensorSpec& spec, const v1::WorkloadInput& input,
                           const std::vector<int64_t>& shape, uint64_t seed, int input_index,
                           const std::string& blob_root, void* dst) {
  absl::StatusOr<int64_t> numel = NumelOf(spec, shape);
  if (!numel.ok()) return numel.status();
  if (DTypeBits(spec.dtype()) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("input '", spec.name(), "': no dtype"));
  }
  switch (input.kind()) {
    case v1::WorkloadInput::KIND_UNSPECIFIED:  // flashinfer-bench's default is random
    case v1::WorkloadInput::RANDOM:
      FillRandom(spec.dtype(), *numel, seed, input_index, dst);
      return absl::OkStatus();
    case v1::WorkloadInput::SCALAR:
      return FillScalar(spec, input, *numel, dst);
    case v1::WorkloadInput::SAFETENSORS: {
      const std::string key = input.tensor_key().empty() ? spec.name() : input.tensor_key();
      return ReadSafetensorsTensor(BlobPath(blob_root, input.path()), key, spec.dtype(), shape,
                                   dst);
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("input '", spec.name(), "': unknown input kind ", input.kind()));
  }
}

}  // namespace kiln
