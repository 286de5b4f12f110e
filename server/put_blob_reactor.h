// The server side of one PutBlob call: a gRPC read reactor that feeds the chunks to a BlobUpload
// and answers once the client has sent its last one. The first error ends the call (the chunks
// still in flight are not read); the temporary file goes with the upload.
#ifndef KILN_SERVER_PUT_BLOB_REACTOR_H_
#define KILN_SERVER_PUT_BLOB_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "harness/blobs/blob_upload.h"
#include "kiln/v1/harness.pb.h"

namespace kiln {

class PutBlobReactor final : public grpc::ServerReadReactor<v1::PutBlobChunk> {
 public:
  // Starts reading unless `refused` is an error, in which case the call ends with it at once.
  PutBlobReactor(std::string blob_root, int64_t max_bytes, v1::PutBlobResponse* response,
                 const absl::Status& refused);

  void OnReadDone(bool ok) override;
  void OnDone() override { delete this; }

 private:
  void Fail(const absl::Status& status);

  std::string blob_root_;
  int64_t max_bytes_;
  v1::PutBlobResponse* response_;
  v1::PutBlobChunk chunk_;
  std::unique_ptr<BlobUpload> upload_;
};

}  // namespace kiln

#endif  // KILN_SERVER_PUT_BLOB_REACTOR_H_
