// Reading one tensor out of a safetensors file (https://github.com/huggingface/safetensors):
// 8 bytes little-endian header length N, N bytes of JSON header
// {name: {"dtype": "BF16", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the data; offsets are relative to the first data byte.
//
//   std::vector<uint8_t> buf(DTypeStorageBytes(v1::DTYPE_INT32, 8));
//   absl::Status s = ReadSafetensorsTensor("blob.safetensors", "kv_indptr", v1::DTYPE_INT32,
//                                          {8}, buf.data());
#ifndef KILN_HARNESS_VERIFY_SAFETENSORS_H_
#define KILN_HARNESS_VERIFY_SAFETENSORS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// The kiln dtype of a safetensors dtype string ("F32", "BF16", "F8_E4M3", "I64", "BOOL", ...).
absl::StatusOr<v1::DType> DTypeFromSafetensors(std::string_view name);

// Copies tensor `key` of the file at `path` into `dst` (DTypeStorageBytes(dtype, numel) bytes)
// after checking that its dtype and shape are `dtype` and `shape`. A missing file is
// FAILED_PRECONDITION "safetensors blob missing: <path>"; a malformed file, an absent key or a
// dtype/shape mismatch is INVALID_ARGUMENT naming the path and the key.
absl::Status ReadSafetensorsTensor(const std::string& path, const std::string& key, v1::DType dtype,
                                   const std::vector<int64_t>& shape, void* dst);

// The checks of ReadSafetensorsTensor without reading the data: the file is there, its header is
// well formed, tensor `key` exists with `dtype` and `shape` and its bytes lie within the file.
// Errors as ReadSafetensorsTensor's ("safetensors <path> tensor '<key>': shape [2] but the
// workload needs [3]").
absl::Status CheckSafetensorsTensor(const std::string& path, const std::string& key,
                                    v1::DType dtype, const std::vector<int64_t>& shape);

// A file is a well-formed safetensors file: header length within the file, the header a JSON
// object, every tensor entry with a dtype string, an integer shape and data_offsets inside the
// data section. dtypes kiln cannot read are allowed (another tensor of the file may be used).
absl::Status ValidateSafetensorsFile(const std::string& path);

}  // namespace kiln

#endif  // KILN_HARNESS_VERIFY_SAFETENSORS_H_
