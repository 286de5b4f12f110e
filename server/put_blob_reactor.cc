#include "server/put_blob_reactor.h"

#include <utility>

#include "server/service.h"

namespace kiln {

PutBlobReactor::PutBlobReactor(std::string blob_root, int64_t max_bytes,
                               v1::PutBlobResponse* response, const absl::Status& refused)
    : blob_root_(std::move(blob_root)), max_bytes_(max_bytes), response_(response) {
  if (!refused.ok()) {
    Finish(ToGrpcStatus(refused));
    return;
  }
  StartRead(&chunk_);
}

void PutBlobReactor::Fail(const absl::Status& status) {
  upload_.reset();  // removes the temporary file
  Finish(ToGrpcStatus(status));
}

void PutBlobReactor::OnReadDone(bool ok) {
  if (!ok) {
    // The client closed its side: everything has arrived (or it was cancelled, in which case
    // the status below is never seen and the upload is dropped).
    if (upload_ == nullptr) return Fail(absl::InvalidArgumentError("no chunk sent"));
    absl::StatusOr<v1::PutBlobResponse> done = upload_->Commit();
    if (!done.ok()) return Fail(done.status());
    *response_ = *std::move(done);
    upload_.reset();
    Finish(grpc::Status::OK);
    return;
  }
  if (upload_ == nullptr) {
    absl::StatusOr<std::unique_ptr<BlobUpload>> begun =
        BlobUpload::Begin(blob_root_, chunk_, max_bytes_);
    if (!begun.ok()) return Fail(begun.status());
    upload_ = *std::move(begun);
  } else if (!chunk_.path().empty() || chunk_.size() != 0 || !chunk_.sha256().empty()) {
    return Fail(absl::InvalidArgumentError(
        "path, size and sha256 belong in the first chunk only"));
  }
  if (absl::Status s = upload_->Append(chunk_.data()); !s.ok()) return Fail(s);
  chunk_.Clear();
  StartRead(&chunk_);
}

}  // namespace kiln
