#include "harness/blobs/blob_upload.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "harness/common/files.h"
#include "harness/verify/safetensors.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;

constexpr char kIncomingDir[] = ".incoming";

absl::Status PathError(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("path: '", path, "' ", why));
}

// True when `inner` is `outer` or below it (both canonical).
bool IsWithin(const fs::path& inner, const fs::path& outer) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end();
}

}  // namespace

absl::StatusOr<std::string> NormalizeBlobPath(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("path: required");
  if (path.find('\0') != std::string::npos) return PathError(path, "contains a NUL byte");
  if (path.find('\\') != std::string::npos) return PathError(path, "contains a backslash");
  if (path.front() == '/') return PathError(path, "is absolute; blob paths are relative");
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return PathError(path, "leaves the blob root ('..')");
    if (part.front() == '.') {
      return PathError(path, absl::StrCat("has a component starting with '.' ('", part, "')"));
    }
    parts.emplace_back(part);
  }
  if (parts.empty()) return PathError(path, "names no file");
  if (path.back() == '/') return PathError(path, "names a folder");
  return absl::StrJoin(parts, "/");
}

absl::StatusOr<std::unique_ptr<BlobUpload>> BlobUpload::Begin(const std::string& blob_root,
                                                              const v1::PutBlobChunk& first,
                                                              int64_t max_bytes) {
  absl::StatusOr<std::string> path = NormalizeBlobPath(first.path());
  if (!path.ok()) return path.status();
  if (first.size() < 0) return absl::InvalidArgumentError("size: must not be negative");
  if (first.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("size: ", first.size(), " bytes, limit ", max_bytes, " bytes"));
  }
  if (!IsSha256Hex(first.sha256())) {
    return absl::InvalidArgumentError(
        absl::StrCat("sha256: '", first.sha256(), "' is not a lowercase hex SHA-256 digest"));
  }
  const std::string incoming = absl::StrCat(blob_root, "/", kIncomingDir);
  if (absl::Status s = MakeDirs(incoming, 0700); !s.ok()) return s;
  std::unique_ptr<BlobUpload> upload(new BlobUpload());
  upload->blob_root_ = blob_root;
  upload->path_ = *path;
  upload->target_ = absl::StrCat(blob_root, "/", *path);
  upload->size_ = first.size();
  upload->sha256_ = first.sha256();
  std::string temp = absl::StrCat(incoming, "/blob-XXXXXX");
  upload->fd_ = ::mkstemp(temp.data());
  if (upload->fd_ < 0) {
    return absl::InternalError(absl::StrCat(incoming, ": mkstemp: ", std::strerror(errno)));
  }
  upload->temp_ = temp;
  return upload;
}

BlobUpload::~BlobUpload() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

absl::Status BlobUpload::Append(std::string_view data) {
  if (fd_ < 0) return absl::FailedPreconditionError("blob upload already finished");
  if (static_cast<int64_t>(data.size()) > size_ - received_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data: more than the announced size of ", size_, " bytes for '", path_, "'"));
  }
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat(temp_, ": write: ", std::strerror(errno)));
    p += n;
    left -= static_cast<size_t>(n);
  }
  digest_.Update(data);
  received_ += static_cast<int64_t>(data.size());
  return absl::OkStatus();
}

absl::StatusOr<v1::PutBlobResponse> BlobUpload::Commit() {
  if (fd_ < 0) return absl::FailedPreconditionError("blob upload already finished");
  if (received_ != size_) {
    return absl::InvalidArgumentError(absl::StrCat("data: ", received_, " bytes received for '",
                                                   path_, "', ", size_, " announced"));
  }
  const std::string got = digest_.HexDigest();
  if (got != sha256_) {
    return absl::InvalidArgumentError(absl::StrCat("sha256: the bytes received for '", path_,
                                                   "' digest to ", got, ", not ", sha256_));
  }
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    return absl::InternalError(absl::StrCat(temp_, ": fsync/close: ", std::strerror(errno)));
  }
  fd_ = -1;
  if (absl::Status s = ValidateSafetensorsFile(temp_); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path_, "' is not a well-formed safetensors file: ",
        absl::StripPrefix(s.message(), absl::StrCat("safetensors ", temp_, ": "))));
  }
  const fs::path parent = fs::path(target_).parent_path();
  if (absl::Status s = MakeDirs(parent.string()); !s.ok()) return s;
  // A folder of the path that is a symlink must not carry the file out of the blob root.
  std::error_code ec;
  const fs::path root = fs::canonical(blob_root_, ec);
  const fs::path real_parent = ec ? fs::path() : fs::canonical(parent, ec);
  if (ec || !IsWithin(real_parent, root)) {
    return PathError(path_, "resolves outside the blob root");
  }
  v1::PutBlobResponse response;
  response.set_path(path_);
  response.set_size(size_);
  response.set_sha256(sha256_);
  if (::link(temp_.c_str(), target_.c_str()) != 0) {
    if (errno != EEXIST) {
      return absl::InternalError(absl::StrCat(target_, ": link: ", std::strerror(errno)));
    }
    absl::StatusOr<std::string> existing = Sha256File(target_);
    if (!existing.ok()) return absl::InternalError(existing.status().message());
    if (*existing != sha256_) {
      return absl::AlreadyExistsError(
          absl::StrCat("blob '", path_, "' is already stored with other content (sha256 ",
                       *existing, "); workloads that name it would change"));
    }
    response.set_already_present(true);
  }
  ::unlink(temp_.c_str());
  temp_.clear();
  return response;
}

}  // namespace kiln
