// The harnesses a controller evaluates on. Each evaluation goes to a live harness that serves
// the campaign's backend and has the shortest queue (its queue depth and running runs, plus what
// this controller has in flight there). A harness that dies mid-run costs a retry elsewhere,
// not the campaign.
#ifndef KILN_CONTROLLER_HARNESS_POOL_H_
#define KILN_CONTROLLER_HARNESS_POOL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/harness.grpc.pb.h"

namespace kiln::controller {

struct HarnessRun {
  std::string harness;  // address
  v1::Run run;
};

class HarnessPool {
 public:
  // `addresses`: HOST:PORT entries; a host name that resolves to several addresses becomes one
  // harness per address.
  // `token`, when not empty, is sent as "authorization: Bearer TOKEN" on every call (harnesses
  // started with --tokens). `credentials`: how to connect (TLS, mutual TLS); null: plaintext.
  // With TLS the certificate must name the host as given in `addresses` (also when it resolves
  // to several addresses).
  explicit HarnessPool(const std::vector<std::string>& addresses, std::string token = "",
                       std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

  const std::vector<std::string>& addresses() const { return addresses_; }
  const std::string& token() const { return token_; }

  // Registers the definition and workloads on every reachable harness (PutDefinition).
  absl::Status RegisterDefinition(const v1::Definition& def,
                                  const std::vector<v1::Workload>& workloads);

  // Evaluates on the best harness for `backend`; `on_admitted(harness, run_id)` is called as soon
  // as a harness admits the run (so it can be recorded before it finishes). Retries on another
  // harness (up to `max_attempts` in all) when the call breaks or the run is INTERRUPTED.
  // `cancelled` is polled; a cancelled evaluation returns CANCELLED.
  absl::StatusOr<HarnessRun> Evaluate(
      const v1::EvaluateRequest& request, const std::string& backend,
      const std::function<void(const std::string&, const std::string&)>& on_admitted,
      const std::atomic<bool>& cancelled, int max_attempts = 3);

  // Waits for a run admitted before a restart; NOT_FOUND or UNAVAILABLE when it cannot be
  // followed there (the caller then evaluates afresh).
  absl::StatusOr<v1::Run> AwaitRun(const std::string& harness, const std::string& run_id,
                                   const std::atomic<bool>& cancelled);

  absl::StatusOr<std::string> GetArtifact(const std::string& harness, const std::string& sha256);

 private:
  struct Node {
    std::string address;
    std::unique_ptr<v1::Harness::Stub> stub;
    int in_flight = 0;
    int64_t down_until_ms = 0;
  };
  // The node to use next, or nullptr when none is up and serves `backend`.
  Node* Pick(const std::string& backend);
  absl::StatusOr<v1::Run> EvaluateOn(
      Node* node, const v1::EvaluateRequest& request,
      const std::function<void(const std::string&, const std::string&)>& on_admitted,
      const std::atomic<bool>& cancelled);
  Node* Find(const std::string& address);

  // Sets the deadline and the bearer token on `context`.
  void Prepare(grpc::ClientContext* context, double seconds) const;

  std::vector<std::string> addresses_;
  std::string token_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_HARNESS_POOL_H_
