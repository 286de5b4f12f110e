// Safetensors inputs: parsing, dtype/shape checks and the missing-blob error.
#include "harness/verify/safetensors.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "harness/common/files.h"
#include "harness/verify/input_generator.h"

namespace kiln {
namespace {

// A safetensors file image: 8-byte little-endian header length, the header, then the data.
std::string Image(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string Int32Bytes(const std::vector<int32_t>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

class TempDir {
 public:
  TempDir() : path_(*MakeTempDir("", "kiln-safetensors-test")) {}
  ~TempDir() { (void)RemoveTree(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const char* kTwoTensors = R"({"__metadata__":{"format":"pt"},)"
                          R"("kv_indptr":{"dtype":"I32","shape":[3],"data_offsets":[0,12]},)"
                          R"("scale":{"dtype":"F32","shape":[1,2],"data_offsets":[12,20]}})";

std::string TwoTensorData() {
  const float scale[2] = {0.5f, -1.25f};
  std::string s = Int32Bytes({0, 7, 73});
  s.append(reinterpret_cast<const char*>(scale), sizeof scale);
  return s;
}

TEST_CASE("a safetensors tensor is read by key after its dtype and shape are checked") {
  TempDir dir;
  const std::string path = dir.path() + "/blob.safetensors";
  REQUIRE(WriteFile(path, Image(kTwoTensors, TwoTensorData())).ok());
  int32_t indptr[3] = {-1, -1, -1};
  REQUIRE(ReadSafetensorsTensor(path, "kv_indptr", v1::DTYPE_INT32, {3}, indptr).ok());
  CHECK(indptr[0] == 0);
  CHECK(indptr[1] == 7);
  CHECK(indptr[2] == 73);
  float scale[2] = {0, 0};
  REQUIRE(ReadSafetensorsTensor(path, "scale", v1::DTYPE_FLOAT32, {1, 2}, scale).ok());
  CHECK(scale[0] == 0.5f);
  CHECK(scale[1] == -1.25f);
}

TEST_CASE("a missing safetensors blob is a failed precondition naming the path") {
  int32_t v[3];
  const std::string path = "/nonexistent/kiln/blob.safetensors";
  auto s = ReadSafetensorsTensor(path, "kv_indptr", v1::DTYPE_INT32, {3}, v);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(s.message()) == "safetensors blob missing: " + path);
}

TEST_CASE("a safetensors dtype, shape or key mismatch is rejected naming the tensor") {
  TempDir dir;
  const std::string path = dir.path() + "/blob.safetensors";
  REQUIRE(WriteFile(path, Image(kTwoTensors, TwoTensorData())).ok());
  int64_t buf[4];
  auto s = ReadSafetensorsTensor(path, "kv_indptr", v1::DTYPE_INT64, {3}, buf);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("kv_indptr") != std::string::npos);
  CHECK(std::string(s.message()).find("int32") != std::string::npos);
  s = ReadSafetensorsTensor(path, "kv_indptr", v1::DTYPE_INT32, {4}, buf);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("[3]") != std::string::npos);
  s = ReadSafetensorsTensor(path, "kv_indices", v1::DTYPE_INT32, {3}, buf);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("kv_indices") != std::string::npos);
  s = ReadSafetensorsTensor(path, "__metadata__", v1::DTYPE_INT32, {3}, buf);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("malformed safetensors files are rejected, not trusted") {
  TempDir dir;
  const std::string path = dir.path() + "/bad.safetensors";
  int32_t buf[3];
  SECTION("header length beyond the file") {
    std::string img = Image(kTwoTensors, TwoTensorData());
    img[7] = 0x7f;
    REQUIRE(WriteFile(path, img).ok());
  }
  SECTION("header is not JSON") { REQUIRE(WriteFile(path, Image("{oops", "")).ok()); }
  SECTION("data offsets run past the file") {
    REQUIRE(WriteFile(path, Image(kTwoTensors, TwoTensorData().substr(0, 10))).ok());
  }
  SECTION("data size disagrees with the shape") {
    REQUIRE(WriteFile(path, Image(R"({"kv_indptr":{"dtype":"I32","shape":[3],)"
                                  R"("data_offsets":[0,8]}})",
                                  Int32Bytes({1, 2, 3})))
                .ok());
  }
  SECTION("shorter than its length prefix") { REQUIRE(WriteFile(path, "abc").ok()); }
  auto s = ReadSafetensorsTensor(path, "kv_indptr", v1::DTYPE_INT32, {3}, buf);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find(path) != std::string::npos);
}

TEST_CASE("GenerateInput resolves a relative safetensors path against the blob root") {
  TempDir dir;
  REQUIRE(MakeDirs(dir.path() + "/blob/w").ok());
  REQUIRE(
      WriteFile(dir.path() + "/blob/w/x.safetensors", Image(kTwoTensors, TwoTensorData())).ok());
  v1::TensorSpec spec;
  spec.set_name("kv_indptr");
  spec.set_dtype(v1::DTYPE_INT32);
  v1::WorkloadInput in;
  in.set_kind(v1::WorkloadInput::SAFETENSORS);
  in.set_path("./blob/w/x.safetensors");
  in.set_tensor_key("kv_indptr");
  int32_t buf[3] = {0, 0, 0};
  REQUIRE(GenerateInput(spec, in, {3}, 0, 0, dir.path(), buf).ok());
  CHECK(buf[2] == 73);
  in.set_path("./blob/w/missing.safetensors");
  auto s = GenerateInput(spec, in, {3}, 0, 0, dir.path(), buf);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(s.message()).find("missing.safetensors") != std::string::npos);
}

TEST_CASE("safetensors dtype names map onto kiln dtypes") {
  CHECK(*DTypeFromSafetensors("BF16") == v1::DTYPE_BFLOAT16);
  CHECK(*DTypeFromSafetensors("F8_E4M3") == v1::DTYPE_FLOAT8_E4M3FN);
  CHECK(*DTypeFromSafetensors("BOOL") == v1::DTYPE_BOOL);
  CHECK_FALSE(DTypeFromSafetensors("U8").ok());
}

TEST_CASE("CheckSafetensorsTensor checks a tensor without reading it, naming file, key, "
          "expected and found") {
  TempDir dir;
  const std::string path = dir.path() + "/blob.safetensors";
  REQUIRE(WriteFile(path, Image(kTwoTensors, TwoTensorData())).ok());
  CHECK(CheckSafetensorsTensor(path, "kv_indptr", v1::DTYPE_INT32, {3}).ok());
  CHECK(CheckSafetensorsTensor(path, "scale", v1::DTYPE_FLOAT32, {1, 2}).ok());

  absl::Status shape = CheckSafetensorsTensor(path, "kv_indptr", v1::DTYPE_INT32, {4});
  CHECK(shape.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(shape.message()) == "safetensors " + path +
                                            " tensor 'kv_indptr': shape [3] but the workload "
                                            "needs [4]");
  absl::Status dtype = CheckSafetensorsTensor(path, "scale", v1::DTYPE_BFLOAT16, {1, 2});
  CHECK(dtype.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(dtype.message()) == "safetensors " + path +
                                            " tensor 'scale': dtype float32 but the definition "
                                            "says bfloat16");
  absl::Status key = CheckSafetensorsTensor(path, "qo_indptr", v1::DTYPE_INT32, {3});
  CHECK(std::string(key.message()) == "safetensors " + path + " tensor 'qo_indptr': no such tensor");
  CHECK(CheckSafetensorsTensor(path, "__metadata__", v1::DTYPE_INT32, {3}).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(CheckSafetensorsTensor(dir.path() + "/none.safetensors", "kv_indptr", v1::DTYPE_INT32,
                               {3})
            .code() == absl::StatusCode::kFailedPrecondition);
  // Data cut short: the header alone does not make the tensor readable.
  REQUIRE(WriteFile(path, Image(kTwoTensors, TwoTensorData().substr(0, 14))).ok());
  CHECK_FALSE(CheckSafetensorsTensor(path, "scale", v1::DTYPE_FLOAT32, {1, 2}).ok());
  CHECK(CheckSafetensorsTensor(path, "kv_indptr", v1::DTYPE_INT32, {3}).ok());
}

TEST_CASE("ValidateSafetensorsFile accepts well-formed files, other dtypes included") {
  TempDir dir;
  const std::string path = dir.path() + "/blob.safetensors";
  REQUIRE(WriteFile(path, Image(kTwoTensors, TwoTensorData())).ok());
  CHECK(ValidateSafetensorsFile(path).ok());
  REQUIRE(WriteFile(path, Image(R"({"u":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})",
                                "ab"))
              .ok());
  CHECK(ValidateSafetensorsFile(path).ok());
  REQUIRE(WriteFile(path, Image("{}", "")).ok());
  CHECK(ValidateSafetensorsFile(path).ok());
}

TEST_CASE("ValidateSafetensorsFile rejects malformed files naming the file") {
  TempDir dir;
  const std::string path = dir.path() + "/blob.safetensors";
  std::string expected;
  SECTION("not safetensors at all") {
    REQUIRE(WriteFile(path, "plain text, long enough").ok());
    expected = "header length";
  }
  SECTION("header is not JSON") {
    REQUIRE(WriteFile(path, Image("[1, 2]", "")).ok());
    expected = "not a JSON object";
  }
  SECTION("offsets past the data") {
    REQUIRE(WriteFile(path, Image(kTwoTensors, TwoTensorData().substr(0, 19))).ok());
    expected = "tensor 'scale': data_offsets run past the file";
  }
  SECTION("entry without dtype") {
    REQUIRE(WriteFile(path, Image(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", "abcd")).ok());
    expected = "tensor 'a': dtype missing";
  }
  SECTION("negative shape") {
    REQUIRE(WriteFile(path, Image(R"({"a":{"dtype":"I32","shape":[-1],"data_offsets":[0,4]}})",
                                  "abcd"))
                .ok());
    expected = "tensor 'a': shape holds a non-integer";
  }
  absl::Status s = ValidateSafetensorsFile(path);
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find(path) != std::string::npos);
  CHECK(std::string(s.message()).find(expected) != std::string::npos);
}

}  // namespace
}  // namespace kiln
