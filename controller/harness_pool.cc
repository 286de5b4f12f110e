#include "controller/harness_pool.h"

#include <netdb.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "controller/campaign_archive.h"

namespace kiln::controller {

namespace {

constexpr int64_t kDownForMs = 5000;

// A stub for `address`; with TLS the server certificate is checked against `host` (the name the
// operator gave, which `address` may be one resolved address of).
std::unique_ptr<v1::Harness::Stub> MakeStub(
    const std::string& address, const std::string& host,
    const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  if (credentials != nullptr && !host.empty()) args.SetSslTargetNameOverride(host);
  return v1::Harness::NewStub(grpc::CreateCustomChannel(
      address, credentials != nullptr ? credentials : grpc::InsecureChannelCredentials(), args));
}

std::string HostOf(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

// "name:port" -> every address `name` resolves to; literal addresses are kept as they are.
std::vector<std::string> Expand(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || address.find(']') != std::string::npos) return {address};
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &result) != 0) return {address};
  std::vector<std::string> out;
  for (addrinfo* a = result; a != nullptr; a = a->ai_next) {
    char buf[NI_MAXHOST];
    if (getnameinfo(a->ai_addr, a->ai_addrlen, buf, sizeof(buf), nullptr, 0, NI_NUMERICHOST) == 0) {
      std::string entry = absl::StrCat(buf, ":", port);
      if (std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(entry);
    }
  }
  freeaddrinfo(result);
  if (out.size() <= 1) return {address};
  return out;
}

void Deadline(grpc::ClientContext* context, double seconds) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
}

bool Retryable(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded ||
         s.code() == absl::StatusCode::kAborted || s.code() == absl::StatusCode::kInternal ||
         s.code() == absl::StatusCode::kResourceExhausted;
}

absl::Status FromGrpc(const grpc::Status& s, const std::string& what) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(what, ": ", s.error_message()));
}

}  // namespace

void HarnessPool::Prepare(grpc::ClientContext* context, double seconds) const {
  Deadline(context, seconds);
  if (!token_.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token_));
}

HarnessPool::HarnessPool(const std::vector<std::string>& addresses, std::string token,
                         std::shared_ptr<grpc::ChannelCredentials> credentials)
    : token_(std::move(token)) {
  for (const std::string& a : addresses) {
    for (const std::string& e : Expand(a)) {
      addresses_.push_back(e);
      auto node = std::make_unique<Node>();
      node->address = e;
      // A name that resolved to this address: the certificate is checked against the name.
      node->stub = MakeStub(e, e != a ? HostOf(a) : "", credentials);
      nodes_.push_back(std::move(node));
    }
  }
}

HarnessPool::Node* HarnessPool::Find(const std::string& address) {
  for (auto& n : nodes_) {
    if (n->address == address) return n.get();
  }
  return nullptr;
}

absl::Status HarnessPool::RegisterDefinition(const v1::Definition& def,
                                             const std::vector<v1::Workload>& workloads) {
  v1::PutDefinitionRequest request;
  *request.mutable_definition() = def;
  for (const v1::Workload& w : workloads) *request.add_workloads() = w;
  int ok = 0;
  std::string last_error;
  for (auto& node : nodes_) {
    grpc::ClientContext context;
    Prepare(&context, 30);
    v1::PutDefinitionResponse response;
    grpc::Status s = node->stub->PutDefinition(&context, request, &response);
    if (s.ok()) {
      ++ok;
    } else {
      last_error = absl::StrCat(node->address, ": ", s.error_message());
    }
  }
  if (ok == 0) return absl::UnavailableError("no harness took the definition: " + last_error);
  return absl::OkStatus();
}

HarnessPool::Node* HarnessPool::Pick(const std::string& backend) {
  Node* best = nullptr;
  int best_load = 0;
  const int64_t now = NowUnixMs();
  for (auto& node : nodes_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (node->down_until_ms > now) continue;
    }
    grpc::ClientContext context;
    Prepare(&context, 5);
    v1::NodeInfo info;
    grpc::Status s = node->stub->GetNodeInfo(&context, v1::GetNodeInfoRequest(), &info);
    std::lock_guard<std::mutex> lock(mu_);
    if (!s.ok()) {
      node->down_until_ms = now + kDownForMs;
      continue;
    }
    bool serves = backend.empty() || info.backends().empty();
    for (const std::string& b : info.backends()) serves = serves || b == backend;
    if (!serves) continue;
    int load = info.queue_depth() + info.running() + node->in_flight;
    if (best == nullptr || load < best_load) {
      best = node.get();
      best_load = load;
    }
  }
  return best;
}

absl::StatusOr<v1::Run> HarnessPool::EvaluateOn(
    Node* node, const v1::EvaluateRequest& request,
    const std::function<void(const std::string&, const std::string&)>& on_admitted,
    const std::atomic<bool>& cancelled) {
  grpc::ClientContext context;
  Prepare(&context, 6 * 3600);
  std::unique_ptr<grpc::ClientReader<v1::EvaluateEvent>> reader =
      node->stub->Evaluate(&context, request);
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (cancelled.load()) {
        context.TryCancel();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  v1::EvaluateEvent event;
  std::optional<v1::Run> run;
  bool admitted = false;
  while (reader->Read(&event)) {
    if (event.has_progress() && !admitted && !event.progress().run_id().empty()) {
      admitted = true;
      on_admitted(node->address, event.progress().run_id());
    }
    if (event.has_run()) run = event.run();
  }
  grpc::Status status = reader->Finish();
  done.store(true);
  watcher.join();
  if (cancelled.load()) return absl::CancelledError("campaign cancelled");
  if (!status.ok()) return FromGrpc(status, node->address);
  if (!run) return absl::UnavailableError(node->address + ": stream ended without a run");
  return *run;
}

absl::StatusOr<HarnessRun> HarnessPool::Evaluate(
    const v1::EvaluateRequest& request, const std::string& backend,
    const std::function<void(const std::string&, const std::string&)>& on_admitted,
    const std::atomic<bool>& cancelled, int max_attempts) {
  absl::Status last = absl::UnavailableError("no harness serves backend " + backend);
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    if (cancelled.load()) return absl::CancelledError("campaign cancelled");
    Node* node = Pick(backend);
    if (node == nullptr) {
      // Every harness is down (or restarting): wait for one to come back before the next try.
      std::this_thread::sleep_for(std::chrono::milliseconds(kDownForMs));
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++node->in_flight;
    }
    absl::StatusOr<v1::Run> run = EvaluateOn(node, request, on_admitted, cancelled);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --node->in_flight;
      if (!run.ok() && Retryable(run.status())) node->down_until_ms = NowUnixMs() + kDownForMs;
    }
    if (run.ok() && run->status() != v1::INTERRUPTED) return HarnessRun{node->address, *run};
    last = run.ok() ? absl::UnavailableError(node->address + ": run interrupted") : run.status();
    if (!run.ok() && !Retryable(run.status())) return last;
  }
  return last;
}

absl::StatusOr<v1::Run> HarnessPool::AwaitRun(const std::string& harness, const std::string& run_id,
                                              const std::atomic<bool>& cancelled) {
  Node* node = Find(harness);
  if (node == nullptr) return absl::NotFoundError("harness " + harness + " is not configured");
  while (!cancelled.load()) {
    grpc::ClientContext context;
    Prepare(&context, 30);
    v1::GetRunRequest request;
    request.set_run_id(run_id);
    v1::Run run;
    grpc::Status s = node->stub->GetRun(&context, request, &run);
    if (!s.ok()) return FromGrpc(s, harness);
    if (run.state() == v1::RUN_DONE) return run;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return absl::CancelledError("campaign cancelled");
}

absl::StatusOr<std::string> HarnessPool::GetArtifact(const std::string& harness,
                                                     const std::string& sha256) {
  Node* node = Find(harness);
  if (node == nullptr) return absl::NotFoundError("harness " + harness + " is not configured");
  grpc::ClientContext context;
  Prepare(&context, 30);
  v1::GetArtifactRequest request;
  request.set_sha256(sha256);
  v1::Artifact artifact;
  grpc::Status s = node->stub->GetArtifact(&context, request, &artifact);
  if (!s.ok()) return FromGrpc(s, harness);
  return artifact.content();
}

}  // namespace kiln::controller
