// PutBlob: blobs of workloads stored under the node's blob root, atomically, checked, never
// replaced with other content, never outside the root, and only by operators.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "harness/blobs/blob_upload.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// A safetensors file holding kv_indptr = int32[3].
std::string Safetensors(int32_t last) {
  const std::string header = R"({"kv_indptr":{"dtype":"I32","shape":[3],"data_offsets":[0,12]}})";
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  const int32_t values[3] = {0, 1, last};
  out.append(reinterpret_cast<const char*>(values), sizeof values);
  return out;
}

// A harness with a tokens file: "ops" (operator, token ops-token), "red" (team, red-token).
class BlobNode {
 public:
  explicit BlobNode(bool with_tokens = false) {
    dir_ = *MakeTempDir("", "kiln-put-blob-test");
    HarnessOptions options = testing::TestOptions(dir_ + "/data");
    if (with_tokens) {
      options.tokens_file = dir_ + "/tokens";
      std::ofstream(options.tokens_file) << "ops operator " << Sha256Hex("ops-token") << "\n"
                                         << "red team " << Sha256Hex("red-token") << "\n";
    }
    node_.emplace(options);
  }
  ~BlobNode() {
    node_.reset();
    (void)RemoveTree(dir_);
  }
  std::string blob_root() const { return dir_ + "/data/blobs"; }

  // Sends `chunks` (the first with path, size and sha256 filled in by the caller).
  grpc::Status Put(const std::vector<v1::PutBlobChunk>& chunks, v1::PutBlobResponse* response,
                   const std::string& token = "") {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    auto writer = node_->stub().PutBlob(&ctx, response);
    for (const v1::PutBlobChunk& c : chunks) {
      if (!writer->Write(c)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }
  // `content` as one upload to `path`, split into chunks of `piece` bytes.
  grpc::Status PutContent(const std::string& path, const std::string& content,
                          v1::PutBlobResponse* response, const std::string& token = "",
                          size_t piece = 7) {
    std::vector<v1::PutBlobChunk> chunks(1);
    chunks[0].set_path(path);
    chunks[0].set_size(static_cast<int64_t>(content.size()));
    chunks[0].set_sha256(Sha256Hex(content));
    for (size_t at = 0; at < content.size(); at += piece) {
      if (at > 0) chunks.emplace_back();
      chunks.back().set_data(content.substr(at, piece));
    }
    return Put(chunks, response, token);
  }

 private:
  std::string dir_;
  std::optional<testing::TestNode> node_;
};

// Files under `dir` (recursively), relative, the store's own folder included.
std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).generic_string());
  }
  return out;
}

TEST_CASE("blob paths are normalized and kept inside the blob root") {
  CHECK(*NormalizeBlobPath("./blob/workloads/x.safetensors") == "blob/workloads/x.safetensors");
  CHECK(*NormalizeBlobPath("blob//a/./b.st") == "blob/a/b.st");
  for (const char* bad : {"", "/etc/passwd", "../x", "blob/../../x", "blob/", ".", "./",
                          "blob/.incoming/x", ".hidden", "a\\b"}) {
    INFO(bad);
    absl::StatusOr<std::string> p = NormalizeBlobPath(bad);
    CHECK(p.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(p.status().message()).rfind("path", 0) == 0);
  }
}

TEST_CASE("PutBlob stores a blob where the workload's relative path resolves") {
  BlobNode node;
  const std::string content = Safetensors(5);
  v1::PutBlobResponse response;
  grpc::Status s = node.PutContent("./blob/workloads/g/w1.safetensors", content, &response);
  INFO(s.error_message());
  REQUIRE(s.ok());
  CHECK(response.path() == "blob/workloads/g/w1.safetensors");
  CHECK(response.size() == static_cast<int64_t>(content.size()));
  CHECK(response.sha256() == Sha256Hex(content));
  CHECK_FALSE(response.already_present());
  CHECK(*ReadFile(node.blob_root() + "/blob/workloads/g/w1.safetensors") == content);
  // No temporary file is left behind.
  CHECK(FilesIn(node.blob_root()) == std::vector<std::string>{"blob/workloads/g/w1.safetensors"});

  SECTION("the same content again is accepted and changes nothing") {
    v1::PutBlobResponse again;
    REQUIRE(node.PutContent("blob/workloads/g/w1.safetensors", content, &again, "", 100).ok());
    CHECK(again.already_present());
  }
  SECTION("other content under the same path is refused, the stored file kept") {
    v1::PutBlobResponse other;
    grpc::Status refused = node.PutContent("blob/workloads/g/w1.safetensors", Safetensors(6),
                                           &other);
    CHECK(refused.error_code() == grpc::StatusCode::ALREADY_EXISTS);
    CHECK(refused.error_message().find("blob/workloads/g/w1.safetensors") != std::string::npos);
    CHECK(*ReadFile(node.blob_root() + "/blob/workloads/g/w1.safetensors") == content);
  }
}

TEST_CASE("PutBlob refuses bad uploads and leaves nothing behind") {
  BlobNode node;
  const std::string content = Safetensors(5);
  v1::PutBlobResponse response;
  std::vector<v1::PutBlobChunk> chunks(1);
  chunks[0].set_path("blob/x.safetensors");
  chunks[0].set_size(static_cast<int64_t>(content.size()));
  chunks[0].set_sha256(Sha256Hex(content));
  chunks[0].set_data(content);
  std::string expected;
  SECTION("digest mismatch") {
    chunks[0].set_sha256(Sha256Hex("something else"));
    expected = "sha256";
  }
  SECTION("fewer bytes than announced") {
    chunks[0].set_size(chunks[0].size() + 1);
    expected = "announced";
  }
  SECTION("more bytes than announced") {
    chunks[0].set_size(chunks[0].size() - 1);
    expected = "more than the announced size";
  }
  SECTION("path escaping the root") {
    chunks[0].set_path("blob/../../escape.safetensors");
    expected = "'..'";
  }
  SECTION("absolute path") {
    chunks[0].set_path("/tmp/escape.safetensors");
    expected = "absolute";
  }
  SECTION("not a safetensors file") {
    const std::string text = "this is not a safetensors file";
    chunks[0].set_size(static_cast<int64_t>(text.size()));
    chunks[0].set_sha256(Sha256Hex(text));
    chunks[0].set_data(text);
    expected = "not a well-formed safetensors file";
  }
  SECTION("metadata repeated in a later chunk") {
    chunks[0].set_data(content.substr(0, 4));
    chunks.emplace_back();
    chunks[1].set_path("blob/y.safetensors");
    chunks[1].set_data(content.substr(4));
    expected = "first chunk only";
  }
  grpc::Status s = node.Put(chunks, &response);
  INFO(s.error_message());
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find(expected) != std::string::npos);
  CHECK(FilesIn(node.blob_root()).empty());
  CHECK_FALSE(fs::exists(fs::path(node.blob_root()).parent_path().parent_path() /
                         "escape.safetensors"));
}

TEST_CASE("PutBlob does not follow a symlinked folder out of the blob root") {
  BlobNode node;
  const std::string outside = *MakeTempDir("", "kiln-put-blob-outside");
  REQUIRE(MakeDirs(node.blob_root()).ok());
  fs::create_directory_symlink(outside, node.blob_root() + "/link");
  v1::PutBlobResponse response;
  grpc::Status s = node.PutContent("link/x.safetensors", Safetensors(1), &response);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("outside the blob root") != std::string::npos);
  CHECK(fs::is_empty(outside));
  (void)RemoveTree(outside);
}

TEST_CASE("PutBlob needs an operator, like PutDefinition") {
  BlobNode node(/*with_tokens=*/true);
  v1::PutBlobResponse response;
  CHECK(node.PutContent("blob/a.safetensors", Safetensors(1), &response, "red-token")
            .error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(node.PutContent("blob/a.safetensors", Safetensors(1), &response, "")
            .error_code() == grpc::StatusCode::UNAUTHENTICATED);
  CHECK_FALSE(fs::exists(node.blob_root() + "/blob/a.safetensors"));
  REQUIRE(node.PutContent("blob/a.safetensors", Safetensors(1), &response, "ops-token").ok());
  CHECK(fs::exists(node.blob_root() + "/blob/a.safetensors"));
}

}  // namespace
}  // namespace kiln
