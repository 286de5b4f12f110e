// The fleet front door's PutBlob: a blob streamed to every healthy harness at once.
#include <memory>
#include <string>
#include <vector>

#include "access/call_metadata.h"
#include "controller/fleet/fleet_calls.h"
#include "controller/fleet/fleet_service.h"

namespace kiln::controller {

grpc::Status FleetService::PutBlob(grpc::ServerContext* context,
                                   grpc::ServerReader<v1::PutBlobChunk>* reader,
                                   v1::PutBlobResponse* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  const std::vector<std::string> targets = pool_.Healthy(kHealthyWaitS);
  if (targets.empty()) return NoHarness();
  // Every healthy harness takes the blob as it streams in (a workload's inputs must be on the
  // harness that runs it); a chunk is kept only until every harness has it.
  struct Upload {
    std::string address;
    grpc::ClientContext context;
    v1::PutBlobResponse response;
    std::unique_ptr<grpc::ClientWriter<v1::PutBlobChunk>> writer;
    bool open = true;
  };
  std::vector<std::unique_ptr<Upload>> uploads;
  for (const std::string& address : targets) {
    auto upload = std::make_unique<Upload>();
    upload->address = address;
    pool_.Prepare(&upload->context, 3600, *authorization);
    upload->writer = pool_.StubOf(address)->PutBlob(&upload->context, &upload->response);
    uploads.push_back(std::move(upload));
  }
  v1::PutBlobChunk chunk;
  while (reader->Read(&chunk)) {
    for (auto& upload : uploads) {
      if (upload->open) upload->open = upload->writer->Write(chunk);
    }
  }
  grpc::Status first_error;
  bool stored = false;
  for (auto& upload : uploads) {
    upload->writer->WritesDone();
    grpc::Status s = upload->writer->Finish();
    if (s.ok()) {
      if (!stored) *response = upload->response;
      stored = true;
      continue;
    }
    if (Broken(s)) pool_.ReportBroken(upload->address, s.error_message());
    if (first_error.ok()) first_error = Named(s, upload->address);
  }
  // Every healthy harness must hold it: a run sent to one without it would fail.
  return first_error.ok() ? grpc::Status::OK : first_error;
}

}  // namespace kiln::controller
