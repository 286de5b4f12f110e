// HarnessPool: which harnesses there are (the configured entries, and the addresses their names
// gain later), and what each must have taken before it is offered work (the journal of what
// callers registered through the controller).
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "controller/campaign_archive.h"
#include "controller/harness_pool.h"

namespace kiln::controller {
namespace {

// A stub for `address`; with TLS the server certificate is checked against `host` (the name the
// operator gave, which `address` may be one resolved address of).
std::unique_ptr<v1::Harness::Stub> MakeStub(
    const std::string& address, const std::string& host,
    const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  // A harness that restarts is found again within a second, not after gRPC's default backoff
  // (up to two minutes).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
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

// "name:port" -> every IPv4 address `name` resolves to, as "a.b.c.d:port"; a literal address
// (or one that does not resolve now) -> itself.
std::vector<std::string> ResolveByDns(const std::string& address) {
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
  if (out.empty()) return {address};
  return out;
}

}  // namespace

HarnessPool::HarnessPool(const std::vector<std::string>& addresses, std::string token,
                         std::shared_ptr<grpc::ChannelCredentials> credentials,
                         PoolOptions options)
    : configured_(addresses),
      credentials_(std::move(credentials)),
      token_(std::move(token)),
      options_(std::move(options)) {
  if (!options_.resolve) options_.resolve = ResolveByDns;
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& a : configured_) {
    const std::vector<std::string> resolved = options_.resolve(a);
    std::set<std::string>& known = known_[a];
    known.insert(resolved.begin(), resolved.end());
    if (resolved.size() <= 1) {
      AddNodeLocked(a, "");  // gRPC resolves the name itself, and again when it reconnects
      continue;
    }
    for (const std::string& e : resolved) AddNodeLocked(e, a);
  }
  if (options_.resolve_interval_s > 0 && !configured_.empty()) {
    resolver_ = std::thread([this] { ResolveLoop(); });
  }
}

HarnessPool::~HarnessPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (resolver_.joinable()) resolver_.join();  // nodes_ grows no more
  for (auto& node : nodes_) {
    if (node->prober.joinable()) node->prober.join();
  }
}

void HarnessPool::AddNodeLocked(const std::string& address, const std::string& configured) {
  if (std::find(addresses_.begin(), addresses_.end(), address) != addresses_.end()) return;
  addresses_.push_back(address);
  auto node = std::make_unique<Node>();
  node->address = address;
  node->resolved_from = configured;
  // A name that resolved to this address: the certificate is checked against the name.
  node->stub = MakeStub(address, configured.empty() ? "" : HostOf(configured), credentials_);
  node->health.address = address;
  node->health.state = HarnessState::kSuspect;
  node->health.since_unix_ms = NowUnixMs();
  node->health.last_error = "not probed yet";
  Node* raw = node.get();
  nodes_.push_back(std::move(node));
  raw->prober = std::thread([this, raw] { ProbeLoop(raw); });
}

void HarnessPool::ResolveLoop() {
  const auto interval = std::chrono::milliseconds(
      static_cast<int64_t>(options_.resolve_interval_s * 1000));
  std::unique_lock<std::mutex> lock(mu_);
  while (!changed_.wait_for(lock, interval, [this] { return stopping_; })) {
    for (const std::string& name : configured_) {
      lock.unlock();
      const std::vector<std::string> resolved = options_.resolve(name);
      lock.lock();
      if (stopping_) return;
      std::set<std::string>& known = known_[name];
      for (const std::string& e : resolved) {
        if (!known.insert(e).second) continue;
        std::fprintf(stderr, "kiln-controller: %s now also resolves to %s: a new harness\n",
                     name.c_str(), e.c_str());
        AddNodeLocked(e, name);
      }
    }
  }
}

std::vector<std::string> HarnessPool::addresses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return addresses_;
}

bool HarnessPool::EligibleLocked(const Node& node) const {
  return node.health.state == HarnessState::kHealthy && node.applied == journal_.size();
}

void HarnessPool::Remember(const Registration& entry,
                           const std::vector<std::string>& registered_on) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    RememberLocked(entry, registered_on);
  }
  changed_.notify_all();
}

void HarnessPool::RememberLocked(const Registration& entry,
                                 const std::vector<std::string>& registered_on) {
  for (JournalEntry& earlier : journal_) {
    if (earlier.registration.kind == entry.kind && earlier.registration.key == entry.key) {
      earlier.replaced = true;
    }
  }
  journal_.push_back({entry, false});
  const size_t index = journal_.size() - 1;
  for (auto& node : nodes_) {
    // Up to date before this entry, and took it: still up to date. Any other harness (down,
    // replaying, or one that did not answer the call) takes it from the journal.
    const bool took = std::find(registered_on.begin(), registered_on.end(), node->address) !=
                      registered_on.end();
    if (took && node->applied == index) node->applied = index + 1;
  }
}

void HarnessPool::LoadJournal(const std::vector<Registration>& entries) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Registration& entry : entries) {
      if (entry.kind == "definition") {
        v1::PutDefinitionRequest request;
        if (request.ParseFromString(entry.request)) definitions_[entry.key] = request;
      }
      RememberLocked(entry, {});
    }
  }
  changed_.notify_all();
}

absl::Status HarnessPool::Replay(Node* node) {
  for (;;) {
    size_t from = 0, to = 0;
    std::vector<Registration> todo;
    {
      std::lock_guard<std::mutex> lock(mu_);
      from = node->applied;
      to = journal_.size();
      if (from >= to) return absl::OkStatus();
      for (size_t i = from; i < to; ++i) {
        if (!journal_[i].replaced) todo.push_back(journal_[i].registration);
      }
    }
    for (const Registration& entry : todo) {
      grpc::ClientContext context;
      Prepare(&context, 60);
      grpc::Status s;
      bool parsed = false;
      if (entry.kind == "definition") {
        v1::PutDefinitionRequest request;
        v1::PutDefinitionResponse response;
        if ((parsed = request.ParseFromString(entry.request))) {
          s = node->stub->PutDefinition(&context, request, &response);
        }
      } else if (entry.kind == "solution") {
        v1::PutSolutionRequest request;
        v1::PutSolutionResponse response;
        if ((parsed = request.ParseFromString(entry.request))) {
          request.set_replace(true);  // the journal is the fleet's word on what it holds
          s = node->stub->PutSolution(&context, request, &response);
        }
      } else if (entry.kind == "settings") {
        v1::SetDefinitionSettingsRequest request;
        v1::DefinitionDetail response;
        if ((parsed = request.ParseFromString(entry.request))) {
          s = node->stub->SetDefinitionSettings(&context, request, &response);
        }
      }
      if (!parsed) {
        std::fprintf(stderr, "kiln-controller: journal entry %s %s cannot be read; skipped\n",
                     entry.kind.c_str(), entry.key.c_str());
        continue;
      }
      if (!s.ok()) {
        return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                            absl::StrCat("replaying ", entry.kind, " ", entry.key,
                                         " was refused: ", s.error_message()));
      }
      if (entry.kind == "definition") {
        std::lock_guard<std::mutex> lock(mu_);
        node->registered.insert(entry.key);
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (node->applied == from) node->applied = to;
    std::fprintf(stderr, "kiln-controller: harness %s took %zu journal entries\n",
                 node->address.c_str(), todo.size());
  }
}

}  // namespace kiln::controller
