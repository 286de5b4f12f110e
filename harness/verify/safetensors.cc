#include "harness/verify/safetensors.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/model/dtype.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

// The safetensors reference implementation refuses headers above 100 MB.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct Entry {
  v1::DType dtype = v1::DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

std::string Where(const std::string& path, const std::string& key) {
  return absl::StrCat("safetensors ", path, " tensor '", key, "'");
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<Json> ReadHeader(std::ifstream& in, const std::string& path, uint64_t file_size,
                                uint64_t* data_start) {
  unsigned char len_bytes[8];
  if (!in.read(reinterpret_cast<char*>(len_bytes), sizeof len_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("safetensors ", path, ": shorter than 8 bytes"));
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n > kMaxHeaderBytes || n > file_size - 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("safetensors ", path, ": header length ", n, " exceeds the file"));
  }
  std::string header(n, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(n))) {
    return absl::InvalidArgumentError(absl::StrCat("safetensors ", path, ": truncated header"));
  }
  *data_start = 8 + n;
  Json j = Json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("safetensors ", path, ": header is not a JSON object"));
  }
  return j;
}

absl::StatusOr<Entry> ParseEntry(const Json& j, const std::string& where) {
  Entry e;
  const auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
  };
  if (!j.is_object()) return bad("entry is not an object");
  const auto dtype = j.find("dtype");
  if (dtype == j.end() || !dtype->is_string()) return bad("dtype missing");
  absl::StatusOr<v1::DType> t = DTypeFromSafetensors(dtype->get<std::string>());
  if (!t.ok()) return bad(t.status().message());
  e.dtype = *t;
  const auto shape = j.find("shape");
  if (shape == j.end() || !shape->is_array()) return bad("shape missing");
  for (const Json& d : *shape) {
    if (!d.is_number_unsigned()) return bad("shape holds a non-integer");
    e.shape.push_back(d.get<int64_t>());
  }
  const auto offsets = j.find("data_offsets");
  if (offsets == j.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
    return bad("data_offsets must be two non-negative integers");
  }
  e.begin = (*offsets)[0].get<uint64_t>();
  e.end = (*offsets)[1].get<uint64_t>();
  if (e.begin > e.end) return bad("data_offsets are reversed");
  return e;
}

absl::Status CheckEntry(const Entry& e, v1::DType dtype, const std::vector<int64_t>& shape,
                        uint64_t data_bytes, const std::string& where) {
  if (e.dtype != dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": dtype ", std::string(DTypeName(e.dtype)),
                     " but the definition says ", std::string(DTypeName(dtype))));
  }
  if (e.shape != shape) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": shape ", ShapeString(e.shape),
                                                   " but the workload needs ", ShapeString(shape)));
  }
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  const uint64_t want = static_cast<uint64_t>(DTypeStorageBytes(dtype, numel));
  if (e.end - e.begin != want) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": holds ", e.end - e.begin, " bytes, expected ", want));
  }
  if (e.end > data_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": data_offsets run past the file"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::DType> DTypeFromSafetensors(std::string_view name) {
  static constexpr std::pair<std::string_view, v1::DType> kNames[] = {
      {"F64", v1::DTYPE_FLOAT64},
      {"F32", v1::DTYPE_FLOAT32},
      {"F16", v1::DTYPE_FLOAT16},
      {"BF16", v1::DTYPE_BFLOAT16},
      {"F8_E4M3", v1::DTYPE_FLOAT8_E4M3FN},
      {"F8_E5M2", v1::DTYPE_FLOAT8_E5M2},
      {"I64", v1::DTYPE_INT64},
      {"I32", v1::DTYPE_INT32},
      {"I16", v1::DTYPE_INT16},
      {"I8", v1::DTYPE_INT8},
      {"BOOL", v1::DTYPE_BOOL},
  };
  for (const auto& [n, t] : kNames) {
    if (n == name) return t;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported safetensors dtype '", std::string(name), "'"));
}

namespace {

// Opens `path`, reads its header and checks tensor `key` against `dtype` and `shape`; leaves `in`
// open for the data and returns the tensor's entry and the first data byte's offset.
absl::Status LocateTensor(const std::string& path, const std::string& key, v1::DType dtype,
                          const std::vector<int64_t>& shape, std::ifstream& in, Entry* entry,
                          uint64_t* data_start) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::FailedPreconditionError(absl::StrCat("safetensors blob missing: ", path));
  }
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  in.open(path, std::ios::binary);
  if (ec || !in) {
    return absl::FailedPreconditionError(absl::StrCat("safetensors blob unreadable: ", path));
  }
  absl::StatusOr<Json> header = ReadHeader(in, path, file_size, data_start);
  if (!header.ok()) return header.status();
  const std::string where = Where(path, key);
  const auto it = header->find(key);
  if (it == header->end() || key == "__metadata__") {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no such tensor"));
  }
  absl::StatusOr<Entry> parsed = ParseEntry(*it, where);
  if (!parsed.ok()) return parsed.status();
  *entry = *parsed;
  return CheckEntry(*entry, dtype, shape, file_size - *data_start, where);
}

}  // namespace

absl::Status ReadSafetensorsTensor(const std::string& path, const std::string& key, v1::DType dtype,
                                   const std::vector<int64_t>& shape, void* dst) {
  std::ifstream in;
  Entry entry;
  uint64_t data_start = 0;
  if (absl::Status s = LocateTensor(path, key, dtype, shape, in, &entry, &data_start); !s.ok()) {
    return s;
  }
  in.seekg(static_cast<std::streamoff>(data_start + entry.begin));
  if (!in.read(static_cast<char*>(dst), static_cast<std::streamsize>(entry.end - entry.begin))) {
    return absl::InvalidArgumentError(absl::StrCat(Where(path, key), ": truncated data"));
  }
  return absl::OkStatus();
}

absl::Status CheckSafetensorsTensor(const std::string& path, const std::string& key,
                                    v1::DType dtype, const std::vector<int64_t>& shape) {
  std::ifstream in;
  Entry entry;
  uint64_t data_start = 0;
  return LocateTensor(path, key, dtype, shape, in, &entry, &data_start);
}

absl::Status ValidateSafetensorsFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::FailedPreconditionError(absl::StrCat("safetensors blob missing: ", path));
  }
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) {
    return absl::FailedPreconditionError(absl::StrCat("safetensors blob unreadable: ", path));
  }
  uint64_t data_start = 0;
  absl::StatusOr<Json> header = ReadHeader(in, path, file_size, &data_start);
  if (!header.ok()) return header.status();
  const uint64_t data_bytes = file_size - data_start;
  for (const auto& [name, value] : header->items()) {
    if (name == "__metadata__") continue;
    const std::string where = Where(path, name);
    if (!value.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, ": not an object"));
    const auto dtype = value.find("dtype");
    if (dtype == value.end() || !dtype->is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": dtype missing"));
    }
    const auto shape = value.find("shape");
    if (shape == value.end() || !shape->is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": shape missing"));
    }
    for (const Json& d : *shape) {
      if (!d.is_number_unsigned()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": shape holds a non-integer"));
      }
    }
    const auto offsets = value.find("data_offsets");
    if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": data_offsets must be two non-negative integers"));
    }
    const uint64_t begin = (*offsets)[0].get<uint64_t>();
    const uint64_t end = (*offsets)[1].get<uint64_t>();
    if (begin > end) return absl::InvalidArgumentError(absl::StrCat(where, ": data_offsets are reversed"));
    if (end > data_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": data_offsets run past the file"));
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln
