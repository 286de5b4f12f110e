// The harnesses a controller evaluates on, and its view of each.
//
// Every harness is probed (GetNodeInfo) every `probe_interval_s` by a thread of its own:
//   healthy  it answered the last probe; new runs may go there;
//   suspect  it stopped answering, or a call to it broke; no new runs go there, its runs in
//            flight are waited for (a restart or a short hang costs nothing);
//   gone     it has not answered for `gone_after_s`; its runs in flight are abandoned (their
//            calls cancelled, which the harness sees as soon as it reads again) and evaluated
//            elsewhere.
// Each evaluation goes to the healthy harness that serves the campaign's backend and has the
// shortest queue (its queue depth and running runs as of its last answer, plus what this
// controller has in flight there). When no harness is healthy, an evaluation waits for one (up to
// `wait_s`) rather than failing. Definitions registered once are registered again on a harness
// that comes back, before anything is sent to it.
//
// What callers registered through the controller (the fleet front door's definitions, solutions
// and definition settings) is kept in a journal (Remember) and replayed, in order, to a harness
// that joins, comes back or restarted, and to one that missed an entry: until it has taken every
// entry it is not offered to new runs or calls (Healthy, evaluations). A host name given in
// `addresses` is resolved again every `resolve_interval_s`: an address it gained (a harness
// pod started on a new GPU node) becomes a harness of the pool.
#ifndef KILN_CONTROLLER_HARNESS_POOL_H_
#define KILN_CONTROLLER_HARNESS_POOL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/harness.grpc.pb.h"

namespace kiln::controller {

struct HarnessRun {
  std::string harness;  // address
  v1::Run run;
};

struct PoolOptions {
  PoolOptions() = default;
  PoolOptions(double probe, double gone, double wait)
      : probe_interval_s(probe), gone_after_s(gone), wait_s(wait) {}
  double probe_interval_s = 2;  // kiln-controller --harness-probe-s
  double gone_after_s = 30;     // --harness-gone-s
  double wait_s = 600;          // --harness-wait-s: how long an evaluation waits for a harness
  double resolve_interval_s = 30;  // --harness-resolve-s: names resolved again; 0: never
  // How a "host:port" entry is resolved to addresses (tests replace it); empty: DNS
  // (getaddrinfo), literal addresses kept as they are.
  std::function<std::vector<std::string>(const std::string&)> resolve;
};

// One entry of the journal of what callers registered through the controller: `kind` is
// "definition" (a PutDefinitionRequest), "solution" (a PutSolutionRequest) or "settings" (a
// SetDefinitionSettingsRequest); `key` names it (a later entry of the same kind and key replaces
// it); `request` is the serialized request, as it is replayed.
struct Registration {
  std::string kind, key, request;
};

enum class HarnessState { kHealthy, kSuspect, kGone };
const char* HarnessStateName(HarnessState state);

struct HarnessHealth {
  std::string address;
  HarnessState state = HarnessState::kSuspect;
  int64_t since_unix_ms = 0;        // in this state since
  int64_t last_answer_unix_ms = 0;  // 0: it has not answered yet
  std::string last_error;           // why it is suspect or gone
  int in_flight = 0;                // this controller's evaluations there now
  int queue_depth = 0, running = 0;  // as of its last answer
};

// How one attempt of an evaluation ended.
struct AttemptEnd {
  std::string harness, run_id;  // run_id: empty when no run was admitted
  // verdict | interrupted (the harness restarted or drained) | abandoned (the harness was gone)
  // | broken (the call failed on the way) | failed (refused: not worth another harness)
  // | cancelled (the campaign stopped)
  std::string outcome;
  std::string detail;
};

struct AttemptObserver {
  // A harness admitted the run (called before it finishes, so it can be recorded).
  std::function<void(const std::string& harness, const std::string& run_id)> admitted;
  std::function<void(const AttemptEnd&)> ended;
  // Every event a harness streams, as it comes (the fleet front door forwards them).
  std::function<void(const std::string& harness, const v1::EvaluateEvent& event)> event;
  // The call's authorization metadata, sent instead of the pool's token when not empty: the
  // front door calls a harness as its own caller, so the run is that principal's.
  std::string authorization;
};

class HarnessPool {
 public:
  // `addresses`: HOST:PORT entries; a host name that resolves to several addresses becomes one
  // harness per address.
  // `token`, when not empty, is sent as "authorization: Bearer TOKEN" on every call (harnesses
  // started with --tokens). `credentials`: how to connect (TLS, mutual TLS); null: plaintext.
  // With TLS the certificate must name the host as given in `addresses` (also when it resolves
  // to several addresses). The probes start at once.
  explicit HarnessPool(const std::vector<std::string>& addresses, std::string token = "",
                       std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr,
                       PoolOptions options = {});
  ~HarnessPool();
  HarnessPool(const HarnessPool&) = delete;
  HarnessPool& operator=(const HarnessPool&) = delete;

  // The harnesses' addresses now, in the order they were configured or found.
  std::vector<std::string> addresses() const;
  const std::string& token() const { return token_; }

  // Called (from a probe thread) whenever a harness changes state; once it returns, the previous
  // listener is no longer running.
  void SetStateListener(std::function<void(const HarnessHealth&)> listener);

  // Every harness as the controller sees it now, in the order configured.
  std::vector<HarnessHealth> Health() const;

  // Registers the definition and workloads (PutDefinition) on every healthy harness, and
  // remembers them for harnesses that come back later. UNAVAILABLE when no harness is healthy;
  // a harness's refusal (a bad definition) is returned as it is.
  absl::Status RegisterDefinition(const v1::Definition& def,
                                  const std::vector<v1::Workload>& workloads);

  // Evaluates on the best healthy harness for `backend`; a broken call, an INTERRUPTED run or a
  // harness gone mid-run costs an attempt and is retried on the best harness then (up to
  // `max_attempts` in all). `observer` hears of each admission and each attempt's end.
  // `cancelled` is polled; a cancelled evaluation returns CANCELLED. UNAVAILABLE when no
  // harness serving `backend` was healthy for `wait_s`.
  absl::StatusOr<HarnessRun> Evaluate(const v1::EvaluateRequest& request,
                                      const std::string& backend, const AttemptObserver& observer,
                                      const std::atomic<bool>& cancelled, int max_attempts = 3);

  // A profile (Profile RPC) on the best healthy harness for `backend`, one attempt: a profile
  // that cannot be taken is evidence missing, not worth another harness's device time.
  absl::StatusOr<HarnessRun> Profile(const v1::ProfileRequest& request, const std::string& backend,
                                     const std::atomic<bool>& cancelled,
                                     const AttemptObserver& observer = {});

  // Starts a call that streams run events (Evaluate, EvaluateBatch, Profile) on `context`.
  using OpenRunStream = std::function<std::unique_ptr<grpc::ClientReader<v1::EvaluateEvent>>(
      v1::Harness::Stub& stub, grpc::ClientContext* context)>;
  // Evaluate's retries over the pool for any call that streams runs: `definition` is registered
  // first where the pool knows it; the result is the last run streamed. `language` (when not
  // empty) leaves out harnesses that said they cannot run it.
  absl::StatusOr<HarnessRun> RunOnPool(const std::string& definition, const OpenRunStream& open,
                                       const std::string& backend,
                                       const AttemptObserver& observer,
                                       const std::atomic<bool>& cancelled, int max_attempts,
                                       const std::string& language = "");

  // For calls that go to one harness as they are (the fleet front door's unary calls):
  // the harnesses that answered their last probe, least loaded first, waiting up to `wait_s`
  // for one when none has (a pool just started has probed none yet);
  std::vector<std::string> Healthy(double wait_s = 0) const;
  // the stub of a configured harness (null when `address` is not one), valid as long as the pool;
  v1::Harness::Stub* StubOf(const std::string& address);
  // the deadline and the bearer token (or `authorization`, when given) on `context`;
  void Prepare(grpc::ClientContext* context, double seconds,
               const std::string& authorization = "") const;
  // a call to `address` broke on the way: suspect until it answers a probe.
  void ReportBroken(const std::string& address, const std::string& error);
  // Remembers a definition registered on every healthy harness by a caller (PutDefinition through
  // the front door), so that a harness that comes back or joins later takes it before any run:
  // `registered_on` took it already.
  void RememberDefinition(const v1::PutDefinitionRequest& request,
                          const std::vector<std::string>& registered_on);
  // Appends `entry` to the journal (replacing an earlier entry of its kind and key); the
  // harnesses in `registered_on` took it already, every other one takes it before its next run
  // or call. RememberDefinition journals its definition too.
  void Remember(const Registration& entry, const std::vector<std::string>& registered_on);
  // The journal as it stood when the controller stopped (the fleet's registration log), loaded
  // once at start: every harness takes it before it is offered work.
  void LoadJournal(const std::vector<Registration>& entries);

  // Waits for a run admitted before a restart; NOT_FOUND or UNAVAILABLE when it cannot be
  // followed there (the caller then evaluates afresh).
  absl::StatusOr<v1::Run> AwaitRun(const std::string& harness, const std::string& run_id,
                                   const std::atomic<bool>& cancelled);

  absl::StatusOr<std::string> GetArtifact(const std::string& harness, const std::string& sha256);

 private:
  struct Node {
    std::string address;
    std::unique_ptr<v1::Harness::Stub> stub;
    // Guarded by the pool's mu_:
    HarnessHealth health;
    std::vector<std::string> backends;       // as of its last answer; empty: any
    std::map<std::string, std::string> languages;  // as of its last answer (NodeInfo.languages)
    std::set<std::string> registered;        // definitions it took since it last answered
    // Journal entries [0, applied) are on it (or were replaced by later ones it also has); it
    // is offered work only when applied == journal_.size(). 0 again when it restarts or stops
    // answering.
    size_t applied = 0;
    std::string resolved_from;  // the configured name it was resolved from ("" for literals)
    std::thread prober;
  };
  // Adds a harness at `address` and starts its prober (mu_ held).
  void AddNodeLocked(const std::string& address, const std::string& configured);
  // Resolves the configured names again every resolve_interval_s, until the pool is destroyed.
  void ResolveLoop();
  // Sends the journal entries `node` lacks (every one from `node->applied` on, the replaced
  // ones left out). OK once it has taken them all; the first error otherwise (mu_ not held).
  absl::Status Replay(Node* node);
  // Whether `node` may be offered work: healthy and up to date with the journal (mu_ held).
  bool EligibleLocked(const Node& node) const;
  void RememberLocked(const Registration& entry, const std::vector<std::string>& registered_on);
  // Probes `node` until the pool is destroyed.
  void ProbeLoop(Node* node);
  // Sets the state under mu_; returns whether it changed.
  bool SetStateLocked(Node* node, HarnessState state, const std::string& error, int64_t now);
  void Announce(const HarnessHealth& health);
  // A call to `node` broke: suspect until it answers a probe.
  void MarkBroken(Node* node, const std::string& error);
  // The healthy node with the shortest queue that serves `backend` and runs `language` (either
  // empty: any); waits up to wait_s.
  absl::StatusOr<Node*> WaitForNode(const std::string& backend, const std::atomic<bool>& cancelled,
                                    const std::string& language = "");
  // PutDefinition of the request's definition on `node` unless it took it since it last came up.
  absl::Status EnsureDefinition(Node* node, const std::string& definition);
  // One attempt on `node`.
  AttemptEnd EvaluateOn(Node* node, const OpenRunStream& open, const AttemptObserver& observer,
                        const std::atomic<bool>& cancelled, absl::StatusOr<v1::Run>* result);
  Node* Find(const std::string& address);


  std::vector<std::string> configured_;  // the entries given, as given
  std::vector<std::string> addresses_;   // guarded by mu_
  // Guarded by mu_: for each configured name, the addresses it resolved to that have a harness
  // (a name that resolved to one address is kept as the name, and stands for that address).
  std::map<std::string, std::set<std::string>> known_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  std::string token_;
  PoolOptions options_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;  // a state changed, or the pool is stopping
  bool stopping_ = false;
  std::mutex listener_mu_;  // held while the listener runs
  std::function<void(const HarnessHealth&)> listener_;
  std::map<std::string, v1::PutDefinitionRequest> definitions_;  // by definition name
  // The journal (Remember); an entry replaced by a later one of the same kind and key is kept
  // (entry indices stay valid) and marked replaced.
  struct JournalEntry {
    Registration registration;
    bool replaced = false;
  };
  std::vector<JournalEntry> journal_;
  std::vector<std::unique_ptr<Node>> nodes_;  // guarded by mu_ (only ever grows)
  std::thread resolver_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_HARNESS_POOL_H_
