// Storing a workload's blob (a safetensors file) under the node's blob root, where the workers
// resolve relative safetensors paths (NodeContext::blob_root). One BlobUpload is one PutBlob
// call: the bytes go to a private temporary file under <blob root>/.incoming and are linked into
// place only when their size and SHA-256 match what the first chunk announced and the file is a
// well-formed safetensors file. link(2) never replaces a file, so of two concurrent uploads of
// one path the second finds the first's file and compares contents.
//
//   auto upload = BlobUpload::Begin(blob_root, first_chunk, max_bytes);
//   (*upload)->Append(chunk.data());   // for every chunk, the first included
//   absl::StatusOr<v1::PutBlobResponse> done = (*upload)->Commit();
#ifndef KILN_HARNESS_BLOBS_BLOB_UPLOAD_H_
#define KILN_HARNESS_BLOBS_BLOB_UPLOAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "harness/common/sha256.h"
#include "kiln/v1/harness.pb.h"

namespace kiln {

// `path` relative to the blob root with "." and empty components dropped ("./blob/a.st" ->
// "blob/a.st"). INVALID_ARGUMENT "path: ..." for an empty or absolute path, "..", a NUL byte, a
// backslash, or a component starting with "." (the store's own files live in such a folder).
absl::StatusOr<std::string> NormalizeBlobPath(const std::string& path);

class BlobUpload {
 public:
  // Checks the first chunk's path, size (0..max_bytes) and sha256 (64 lowercase hex digits) and
  // creates the temporary file. Errors are INVALID_ARGUMENT naming the field.
  static absl::StatusOr<std::unique_ptr<BlobUpload>> Begin(const std::string& blob_root,
                                                           const v1::PutBlobChunk& first,
                                                           int64_t max_bytes);
  ~BlobUpload();  // removes the temporary file unless it was committed
  BlobUpload(const BlobUpload&) = delete;
  BlobUpload& operator=(const BlobUpload&) = delete;

  // Writes `data`; INVALID_ARGUMENT once more than the announced size has arrived.
  absl::Status Append(std::string_view data);
  // Checks size, digest and format and links the file into place. An identical file already
  // there is success (already_present); a different one ALREADY_EXISTS naming the path.
  absl::StatusOr<v1::PutBlobResponse> Commit();

 private:
  BlobUpload() = default;

  std::string blob_root_;
  std::string path_;    // normalized, relative to blob_root_
  std::string target_;  // blob_root_/path_
  std::string temp_;    // the temporary file, "" once gone
  int fd_ = -1;
  int64_t size_ = 0;
  std::string sha256_;
  int64_t received_ = 0;
  Sha256 digest_;
};

}  // namespace kiln

#endif  // KILN_HARNESS_BLOBS_BLOB_UPLOAD_H_
