#include "controller/harness_pool.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/campaign_archive.h"

namespace kiln::controller {

namespace {

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

// "DEADLINE_EXCEEDED: Deadline Exceeded"
std::string Describe(const grpc::Status& s) {
  return absl::StrCat(absl::StatusCodeToString(static_cast<absl::StatusCode>(s.error_code())),
                      ": ", s.error_message());
}

std::chrono::milliseconds Ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// What a harness has to do before a new run: its queue and runs as of its last answer, plus what
// this controller has sent there since.
int Load(const HarnessHealth& h) { return h.queue_depth + h.running + h.in_flight; }

}  // namespace

const char* HarnessStateName(HarnessState state) {
  switch (state) {
    case HarnessState::kHealthy:
      return "healthy";
    case HarnessState::kSuspect:
      return "suspect";
    case HarnessState::kGone:
      return "gone";
  }
  return "suspect";
}

void HarnessPool::Prepare(grpc::ClientContext* context, double seconds,
                          const std::string& authorization) const {
  Deadline(context, seconds);
  if (!authorization.empty()) {
    context->AddMetadata("authorization", authorization);
  } else if (!token_.empty()) {
    context->AddMetadata("authorization", absl::StrCat("Bearer ", token_));
  }
}

std::vector<std::string> HarnessPool::Healthy(double wait_s) const {
  std::vector<std::pair<int, std::string>> loads;
  {
    const auto deadline = std::chrono::steady_clock::now() + Ms(wait_s);
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      for (const auto& node : nodes_) {
        if (!EligibleLocked(*node)) continue;
        loads.emplace_back(Load(node->health), node->address);
      }
      if (!loads.empty() || stopping_ || std::chrono::steady_clock::now() >= deadline) break;
      changed_.wait_until(lock, deadline);
    }
  }
  std::stable_sort(loads.begin(), loads.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& [load, address] : loads) out.push_back(std::move(address));
  return out;
}

v1::Harness::Stub* HarnessPool::StubOf(const std::string& address) {
  Node* node = Find(address);
  return node == nullptr ? nullptr : node->stub.get();
}

void HarnessPool::ReportBroken(const std::string& address, const std::string& error) {
  if (Node* node = Find(address); node != nullptr) MarkBroken(node, error);
}

void HarnessPool::RememberDefinition(const v1::PutDefinitionRequest& request,
                                     const std::vector<std::string>& registered_on) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::string& name = request.definition().name();
  definitions_[name] = request;
  for (auto& node : nodes_) {
    const bool took = std::find(registered_on.begin(), registered_on.end(), node->address) !=
                      registered_on.end();
    if (took) {
      node->registered.insert(name);
    } else {
      node->registered.erase(name);
    }
  }
  RememberLocked({"definition", name, request.SerializeAsString()}, registered_on);
}

void HarnessPool::SetStateListener(std::function<void(const HarnessHealth&)> listener) {
  std::lock_guard<std::mutex> lock(listener_mu_);
  listener_ = std::move(listener);
}

std::vector<HarnessHealth> HarnessPool::Health() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<HarnessHealth> out;
  for (const auto& node : nodes_) out.push_back(node->health);
  return out;
}

HarnessPool::Node* HarnessPool::Find(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& n : nodes_) {
    if (n->address == address) return n.get();
  }
  return nullptr;
}

bool HarnessPool::SetStateLocked(Node* node, HarnessState state, const std::string& error,
                                 int64_t now) {
  if (state != HarnessState::kHealthy) {
    node->health.last_error = error;
    // It may come back as another process (or with another data dir): register again then.
    node->registered.clear();
  }
  if (node->health.state == state) return false;
  node->health.state = state;
  node->health.since_unix_ms = now;
  if (state == HarnessState::kHealthy) node->health.last_error.clear();
  return true;
}

void HarnessPool::Announce(const HarnessHealth& health) {
  std::fprintf(stderr, "kiln-controller: harness %s %s%s%s\n", health.address.c_str(),
               HarnessStateName(health.state), health.last_error.empty() ? "" : ": ",
               health.last_error.c_str());
  std::lock_guard<std::mutex> lock(listener_mu_);
  if (listener_) listener_(health);
}

void HarnessPool::ProbeLoop(Node* node) {
  const double timeout_s = std::clamp(options_.probe_interval_s, 0.5, 5.0);
  const int64_t gone_after_ms = static_cast<int64_t>(options_.gone_after_s * 1000);
  const int64_t created_ms = NowUnixMs();
  int64_t started_unix_ms = 0;  // of the harness process last seen
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    grpc::ClientContext context;
    Prepare(&context, timeout_s);
    v1::NodeInfo info;
    grpc::Status s = node->stub->GetNodeInfo(&context, v1::GetNodeInfoRequest(), &info);
    const int64_t now = NowUnixMs();
    lock.lock();
    if (stopping_) break;
    bool changed = false;
    if (s.ok()) {
      HarnessHealth& h = node->health;
      h.last_answer_unix_ms = now;
      h.queue_depth = info.queue_depth();
      h.running = info.running();
      node->backends.assign(info.backends().begin(), info.backends().end());
      node->languages.clear();
      node->languages.insert(info.languages().begin(), info.languages().end());
      if (info.started_unix_ms() != started_unix_ms) {
        // Restarted between two probes (or first seen): its definitions are registered again,
        // and the whole journal is replayed.
        node->registered.clear();
        node->applied = 0;
        started_unix_ms = info.started_unix_ms();
      }
      absl::Status replayed = absl::OkStatus();
      if (node->applied < journal_.size()) {
        lock.unlock();
        replayed = Replay(node);
        lock.lock();
        if (stopping_) break;
      }
      changed = replayed.ok()
                    ? SetStateLocked(node, HarnessState::kHealthy, "", now)
                    : SetStateLocked(node, HarnessState::kSuspect,
                                     absl::StrCat("answers, but ", replayed.message()), now);
      // A refused replay is tried again from the start at the next probe.
      if (!replayed.ok()) node->applied = 0;
    } else {
      const int64_t silent_since =
          node->health.last_answer_unix_ms > 0 ? node->health.last_answer_unix_ms : created_ms;
      const bool gone =
          node->health.state == HarnessState::kGone || now - silent_since >= gone_after_ms;
      changed = SetStateLocked(node, gone ? HarnessState::kGone : HarnessState::kSuspect,
                               Describe(s), now);
    }
    if (changed) {
      HarnessHealth health = node->health;
      changed_.notify_all();
      lock.unlock();
      Announce(health);
      lock.lock();
    }
    changed_.wait_for(lock, Ms(options_.probe_interval_s), [this] { return stopping_; });
  }
}

void HarnessPool::MarkBroken(Node* node, const std::string& error) {
  std::optional<HarnessHealth> announce;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const HarnessState state =
        node->health.state == HarnessState::kGone ? HarnessState::kGone : HarnessState::kSuspect;
    if (SetStateLocked(node, state, error, NowUnixMs())) announce = node->health;
  }
  if (announce) Announce(*announce);
}

absl::Status HarnessPool::RegisterDefinition(const v1::Definition& def,
                                             const std::vector<v1::Workload>& workloads) {
  v1::PutDefinitionRequest request;
  *request.mutable_definition() = def;
  for (const v1::Workload& w : workloads) *request.add_workloads() = w;
  std::vector<Node*> healthy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    definitions_[def.name()] = request;
    for (auto& node : nodes_) {
      node->registered.erase(def.name());  // a changed definition is sent again
      if (node->health.state == HarnessState::kHealthy) healthy.push_back(node.get());
    }
  }
  if (healthy.empty()) return absl::UnavailableError("no harness is healthy");
  // One call per harness, all at once: a slow harness does not hold up the others.
  std::vector<absl::Status> results(healthy.size());
  std::vector<std::thread> calls;
  for (size_t i = 0; i < healthy.size(); ++i) {
    calls.emplace_back([&, i] { results[i] = EnsureDefinition(healthy[i], def.name()); });
  }
  for (std::thread& t : calls) t.join();
  int ok = 0;
  absl::Status last;
  for (const absl::Status& s : results) {
    if (s.ok()) {
      ++ok;
    } else if (!Retryable(s)) {
      return s;  // the harness refused the definition itself
    } else {
      last = s;
    }
  }
  if (ok == 0) return absl::UnavailableError(absl::StrCat("no harness took the definition: ",
                                                          last.message()));
  return absl::OkStatus();
}

absl::Status HarnessPool::EnsureDefinition(Node* node, const std::string& definition) {
  v1::PutDefinitionRequest request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = definitions_.find(definition);
    // Definitions the harness has of its own (builtins, registered by an operator).
    if (it == definitions_.end() || node->registered.count(definition) > 0) {
      return absl::OkStatus();
    }
    request = it->second;
  }
  grpc::ClientContext context;
  Prepare(&context, 30);
  v1::PutDefinitionResponse response;
  grpc::Status s = node->stub->PutDefinition(&context, request, &response);
  if (!s.ok()) return FromGrpc(s, node->address);
  std::lock_guard<std::mutex> lock(mu_);
  node->registered.insert(definition);
  return absl::OkStatus();
}

namespace {

// Why a harness, as it last said (its backends and languages; nothing known before its first
// answer), cannot run a run of `backend` and `language`, to follow its address (" runs host",
// ": python unavailable: ..."): "" when it may.
std::string WhyNotRun(const std::vector<std::string>& backends,
                      const std::map<std::string, std::string>& languages,
                      const std::string& backend, const std::string& language) {
  if (!backend.empty() && !backends.empty() &&
      std::find(backends.begin(), backends.end(), backend) == backends.end()) {
    return absl::StrCat(" runs ", absl::StrJoin(backends, ", "));
  }
  // A harness that names the language's state and says it cannot run it (no torch, no GPU
  // backend for it) is no place for the run.
  if (!language.empty()) {
    auto it = languages.find(language);
    if (it != languages.end() && absl::StartsWith(it->second, "unavailable")) {
      return absl::StrCat(": ", language, " ", it->second);
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<HarnessPool::Node*> HarnessPool::WaitForNode(const std::string& backend,
                                                            const std::atomic<bool>& cancelled,
                                                            const std::string& language) {
  const auto deadline = std::chrono::steady_clock::now() + Ms(options_.wait_s);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Node* best = nullptr;
    int best_load = 0;
    // Whether a harness not eligible now may take the run once it is (it is down, still taking
    // the journal, or has not said what it runs); else, with none eligible, waiting is futile.
    bool may_later = false;
    for (auto& node : nodes_) {
      if (!WhyNotRun(node->backends, node->languages, backend, language).empty()) continue;
      if (!EligibleLocked(*node)) {
        may_later = true;
        continue;
      }
      const int load = Load(node->health);
      if (best == nullptr || load < best_load) {
        best = node.get();
        best_load = load;
      }
    }
    if (best != nullptr) {
      // Counted at once, so that evaluations picking together spread over the harnesses.
      ++best->health.in_flight;
      return best;
    }
    if (cancelled.load() || stopping_) return absl::CancelledError("campaign cancelled");
    if (!may_later && !nodes_.empty()) {
      std::string refusals;
      for (auto& node : nodes_) {
        absl::StrAppend(&refusals, refusals.empty() ? "" : "; ", node->address,
                        WhyNotRun(node->backends, node->languages, backend, language));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "no harness of the fleet runs backend ", backend.empty() ? "(any)" : backend,
          language.empty() ? "" : absl::StrCat(" and language ", language), " (", refusals, ")"));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string states;
      for (auto& node : nodes_) {
        absl::StrAppend(&states, states.empty() ? "" : "; ", node->address, " ",
                        HarnessStateName(node->health.state),
                        node->health.last_error.empty() ? "" : ": ", node->health.last_error);
      }
      return absl::UnavailableError(absl::StrFormat(
          "no healthy harness serving backend %s%s for %.0f s (%s)",
          backend.empty() ? "(any)" : backend,
          language.empty() ? "" : absl::StrCat(" and language ", language), options_.wait_s,
          states));
    }
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

AttemptEnd HarnessPool::EvaluateOn(Node* node, const OpenRunStream& open,
                                   const AttemptObserver& observer,
                                   const std::atomic<bool>& cancelled,
                                   absl::StatusOr<v1::Run>* result) {
  AttemptEnd end;
  end.harness = node->address;
  grpc::ClientContext context;
  Prepare(&context, 6 * 3600, observer.authorization);
  std::unique_ptr<grpc::ClientReader<v1::EvaluateEvent>> reader = open(*node->stub, &context);
  std::atomic<bool> done{false};
  std::atomic<bool> abandoned{false};
  std::thread watcher([&] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!done.load()) {
      if (cancelled.load() || stopping_) {
        lock.unlock();
        context.TryCancel();
        return;
      }
      if (node->health.state == HarnessState::kGone) {
        abandoned.store(true);
        lock.unlock();
        context.TryCancel();
        return;
      }
      changed_.wait_for(lock, std::chrono::milliseconds(100));
    }
  });
  v1::EvaluateEvent event;
  std::optional<v1::Run> run;
  while (reader->Read(&event)) {
    if (event.has_progress() && end.run_id.empty() && !event.progress().run_id().empty()) {
      end.run_id = event.progress().run_id();
      if (observer.admitted) observer.admitted(node->address, end.run_id);
    }
    if (event.has_run()) run = event.run();
    if (observer.event) observer.event(node->address, event);
  }
  grpc::Status status = reader->Finish();
  done.store(true);
  changed_.notify_all();
  watcher.join();
  if (run && status.ok()) {
    *result = *run;
    if (run->status() == v1::INTERRUPTED) {
      end.outcome = "interrupted";
      end.detail = run->reason();
    } else {
      end.outcome = "verdict";
      end.detail = v1::EvaluationStatus_Name(run->status());
    }
    return end;
  }
  if (abandoned.load()) {
    std::string why;
    {
      std::lock_guard<std::mutex> lock(mu_);
      why = node->health.last_error;
    }
    *result = absl::UnavailableError(absl::StrFormat(
        "%s: abandoned: no answer for %.0f s (%s)", node->address, options_.gone_after_s, why));
    end.outcome = "abandoned";
  } else if (cancelled.load()) {
    *result = absl::CancelledError("campaign cancelled");
    end.outcome = "cancelled";
  } else if (!status.ok()) {
    *result = FromGrpc(status, node->address);
    end.outcome = Retryable(result->status()) ? "broken" : "failed";
  } else {
    *result = absl::UnavailableError(node->address + ": stream ended without a run");
    end.outcome = "broken";
  }
  end.detail = std::string(result->status().message());
  return end;
}

absl::StatusOr<HarnessRun> HarnessPool::Evaluate(const v1::EvaluateRequest& request,
                                                 const std::string& backend,
                                                 const AttemptObserver& observer,
                                                 const std::atomic<bool>& cancelled,
                                                 int max_attempts) {
  return RunOnPool(
      request.definition(),
      [&request](v1::Harness::Stub& stub, grpc::ClientContext* context) {
        return stub.Evaluate(context, request);
      },
      backend, observer, cancelled, max_attempts);
}

absl::StatusOr<HarnessRun> HarnessPool::Profile(const v1::ProfileRequest& request,
                                                const std::string& backend,
                                                const std::atomic<bool>& cancelled,
                                                const AttemptObserver& observer) {
  return RunOnPool(
      request.definition(),
      [&request](v1::Harness::Stub& stub, grpc::ClientContext* context) {
        return stub.Profile(context, request);
      },
      backend, observer, cancelled, /*max_attempts=*/1);
}

absl::StatusOr<HarnessRun> HarnessPool::RunOnPool(const std::string& definition,
                                                  const OpenRunStream& open,
                                                  const std::string& backend,
                                                  const AttemptObserver& observer,
                                                  const std::atomic<bool>& cancelled,
                                                  int max_attempts,
                                                  const std::string& language) {
  absl::Status last = absl::UnavailableError("no attempt made");
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    if (cancelled.load()) return absl::CancelledError("campaign cancelled");
    absl::StatusOr<Node*> picked = WaitForNode(backend, cancelled, language);
    if (!picked.ok()) return picked.status();
    Node* node = *picked;
    AttemptEnd end;
    absl::StatusOr<v1::Run> run = absl::UnknownError("not run");
    if (absl::Status s = EnsureDefinition(node, definition); !s.ok()) {
      run = s;
      end.harness = node->address;
      end.outcome = Retryable(s) ? "broken" : "failed";
      end.detail = absl::StrCat("registering the definition: ", s.message());
    } else {
      end = EvaluateOn(node, open, observer, cancelled, &run);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      --node->health.in_flight;
    }
    changed_.notify_all();
    if (observer.ended) observer.ended(end);
    if (end.outcome == "verdict") return HarnessRun{node->address, *run};
    if (end.outcome == "cancelled") return absl::CancelledError("campaign cancelled");
    if (end.outcome == "failed") return run.status();
    // A broken call or a run the harness interrupted (it restarted, or drains): no new run goes
    // there until it answers a probe again.
    if (end.outcome == "broken" || end.outcome == "interrupted") {
      MarkBroken(node, absl::StrCat(end.outcome, ": ", end.detail));
    }
    last = run.ok() ? absl::UnavailableError(absl::StrCat(node->address, ": run interrupted: ",
                                                          end.detail))
                    : run.status();
  }
  return absl::UnavailableError(
      absl::StrCat("gave up after ", max_attempts, " attempts; the last: ", last.message()));
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
