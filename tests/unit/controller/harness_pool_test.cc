// HarnessPool's view of its harnesses and what it does with runs in flight, against fake
// harnesses served by real gRPC servers in the test process: a harness that stops answering is
// suspect, then gone, and its run is abandoned (its call cancelled) and evaluated on another; an
// evaluation waits for a healthy harness and fails naming each one's state; a harness that
// restarted gets the campaign's definition again before its next run.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/harness_pool.h"
#include "kiln/v1/harness.grpc.pb.h"

namespace kiln::controller {
namespace {

using std::chrono::milliseconds;

// Answers GetNodeInfo, PutDefinition and Evaluate. `hang` makes every call block until the
// caller gives up (a stopped or cut-off node); `hold_runs` keeps admitted runs from finishing.
class FakeHarness final : public v1::Harness::Service {
 public:
  std::atomic<bool> hang{false};
  std::atomic<bool> hold_runs{false};
  std::atomic<int64_t> started_unix_ms{1000};
  std::atomic<int> puts{0};
  std::atomic<int> evaluations{0};
  std::atomic<int> cancelled_runs{0};
  std::string python;  // NodeInfo.languages["python"], when set (before the pool starts)
  std::mutex auth_mu;
  std::vector<std::string> authorizations;  // each Evaluate's authorization metadata

  grpc::Status GetNodeInfo(grpc::ServerContext* context, const v1::GetNodeInfoRequest*,
                           v1::NodeInfo* info) override {
    if (!Wait(context, hang)) return grpc::Status::CANCELLED;
    info->add_backends("host");
    if (!python.empty()) (*info->mutable_languages())["python"] = python;
    info->set_started_unix_ms(started_unix_ms.load());
    return grpc::Status::OK;
  }
  grpc::Status PutDefinition(grpc::ServerContext* context, const v1::PutDefinitionRequest*,
                             v1::PutDefinitionResponse*) override {
    if (!Wait(context, hang)) return grpc::Status::CANCELLED;
    ++puts;
    return grpc::Status::OK;
  }
  // What PutSolution and SetDefinitionSettings received, in order ("solution NAME replace=1",
  // "settings DEF reset=1"); `refuse_solutions` answers them FAILED_PRECONDITION.
  std::mutex taken_mu;
  std::vector<std::string> taken;
  std::atomic<bool> refuse_solutions{false};
  std::vector<std::string> Taken() {
    std::lock_guard<std::mutex> lock(taken_mu);
    return taken;
  }
  grpc::Status PutSolution(grpc::ServerContext* context, const v1::PutSolutionRequest* request,
                           v1::PutSolutionResponse*) override {
    if (!Wait(context, hang)) return grpc::Status::CANCELLED;
    if (refuse_solutions) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no such definition");
    }
    std::lock_guard<std::mutex> lock(taken_mu);
    taken.push_back("solution " + request->name() + " replace=" +
                    std::to_string(request->replace()));
    return grpc::Status::OK;
  }
  grpc::Status SetDefinitionSettings(grpc::ServerContext* context,
                                     const v1::SetDefinitionSettingsRequest* request,
                                     v1::DefinitionDetail*) override {
    if (!Wait(context, hang)) return grpc::Status::CANCELLED;
    std::lock_guard<std::mutex> lock(taken_mu);
    taken.push_back("settings " + request->definition() + " reset=" +
                    std::to_string(request->reset()));
    return grpc::Status::OK;
  }
  grpc::Status Evaluate(grpc::ServerContext* context, const v1::EvaluateRequest*,
                        grpc::ServerWriter<v1::EvaluateEvent>* writer) override {
    {
      std::lock_guard<std::mutex> lock(auth_mu);
      auto it = context->client_metadata().find("authorization");
      authorizations.push_back(it == context->client_metadata().end()
                                   ? std::string()
                                   : std::string(it->second.data(), it->second.size()));
    }
    const std::string run_id = "run-" + std::to_string(++evaluations);
    v1::EvaluateEvent admitted;
    admitted.mutable_progress()->set_run_id(run_id);
    writer->Write(admitted);
    if (!Wait(context, hold_runs) || !Wait(context, hang)) {
      ++cancelled_runs;
      return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    v1::EvaluateEvent done;
    done.mutable_run()->set_run_id(run_id);
    done.mutable_run()->set_status(v1::PASSED);
    done.mutable_run()->set_state(v1::RUN_DONE);
    writer->Write(done);
    return grpc::Status::OK;
  }

 private:
  // Waits while `flag` is set; false when the caller went away meanwhile.
  static bool Wait(grpc::ServerContext* context, const std::atomic<bool>& flag) {
    while (flag.load()) {
      if (context->IsCancelled()) return false;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return !context->IsCancelled();
  }
};

class FakeNode {
 public:
  FakeNode() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
    REQUIRE(server_ != nullptr);
    address = "127.0.0.1:" + std::to_string(port);
  }
  ~FakeNode() {
    service.hang = false;
    service.hold_runs = false;
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
  FakeHarness service;
  std::string address;

 private:
  std::unique_ptr<grpc::Server> server_;
};

const PoolOptions kFast{/*probe_interval_s=*/0.05, /*gone_after_s=*/0.6, /*wait_s=*/3};

HarnessState StateOf(const HarnessPool& pool, const std::string& address) {
  for (const HarnessHealth& h : pool.Health()) {
    if (h.address == address) return h.state;
  }
  FAIL("no harness " << address);
  return HarnessState::kGone;
}

// Waits up to 5 s for `address` to reach `state`.
bool Reaches(const HarnessPool& pool, const std::string& address, HarnessState state) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (StateOf(pool, address) == state) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

v1::EvaluateRequest Request() {
  v1::EvaluateRequest request;
  request.set_definition("scale_add_f32");
  return request;
}

struct Recorder {
  std::mutex mu;
  std::vector<AttemptEnd> ends;
  std::vector<std::string> admitted;
  std::atomic<bool> cancelled{false};
  // One evaluation on `pool` on a thread of its own, observed here; its result in `result`.
  std::thread Start(HarnessPool& pool, absl::StatusOr<HarnessRun>* result) {
    return std::thread([this, &pool, result] {
      *result = pool.Evaluate(Request(), "host", Observer(), cancelled);
    });
  }
  AttemptObserver Observer() {
    AttemptObserver o;
    o.admitted = [this](const std::string& harness, const std::string& run_id) {
      std::lock_guard<std::mutex> lock(mu);
      admitted.push_back(harness + " " + run_id);
    };
    o.ended = [this](const AttemptEnd& end) {
      std::lock_guard<std::mutex> lock(mu);
      ends.push_back(end);
    };
    return o;
  }
};

TEST_CASE("harness pool: a harness that stops answering is suspect, then gone; its run is "
          "abandoned and evaluated on another harness") {
  FakeNode a, b;
  HarnessPool pool({a.address, b.address}, "", nullptr, kFast);
  std::vector<std::string> transitions;
  std::mutex transitions_mu;
  pool.SetStateListener([&](const HarnessHealth& h) {
    std::lock_guard<std::mutex> lock(transitions_mu);
    transitions.push_back(h.address + " " + HarnessStateName(h.state));
  });
  REQUIRE(Reaches(pool, a.address, HarnessState::kHealthy));
  REQUIRE(Reaches(pool, b.address, HarnessState::kHealthy));
  // Both idle: the run goes to the first, A, which holds it.
  a.service.hold_runs = true;
  Recorder recorder;
  absl::StatusOr<HarnessRun> result = absl::UnknownError("not run");
  std::thread evaluation = recorder.Start(pool, &result);
  // Whichever harness admitted the run now stops answering.
  std::string holder;
  for (int i = 0; i < 500 && holder.empty(); ++i) {
    {
      std::lock_guard<std::mutex> lock(recorder.mu);
      if (!recorder.admitted.empty()) holder = recorder.admitted[0].substr(0, a.address.size());
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  if (holder.empty()) {
    a.service.hold_runs = false;
    evaluation.join();
    FAIL("no run was admitted; the evaluation ended: " << result.status());
  }
  REQUIRE(holder == a.address);
  a.service.hang = true;
  CHECK(Reaches(pool, a.address, HarnessState::kSuspect));
  CHECK(Reaches(pool, a.address, HarnessState::kGone));
  evaluation.join();
  REQUIRE(result.ok());
  CHECK(result->harness == b.address);
  CHECK(result->run.status() == v1::PASSED);
  REQUIRE(recorder.ends.size() == 2);
  CHECK(recorder.ends[0].harness == a.address);
  CHECK(recorder.ends[0].run_id == "run-1");
  CHECK(recorder.ends[0].outcome == "abandoned");
  CHECK_THAT(recorder.ends[0].detail, Catch::Contains("no answer for"));
  CHECK(recorder.ends[1].harness == b.address);
  CHECK(recorder.ends[1].outcome == "verdict");
  // A learnt that its call was given up.
  for (int i = 0; i < 200 && a.service.cancelled_runs.load() == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  CHECK(a.service.cancelled_runs.load() == 1);
  // A answers again: healthy, and the listener heard every change.
  a.service.hang = false;
  CHECK(Reaches(pool, a.address, HarnessState::kHealthy));
  // The pool sets the state first and tells the listener after, outside its lock: wait for
  // the listener to hear it before taking the listener away.
  const std::string expected = a.address + " suspect\n" + a.address + " gone\n" + a.address +
                               " healthy\n";
  std::string joined;
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard<std::mutex> lock(transitions_mu);
      joined.clear();
      for (const std::string& t : transitions) joined += t + "\n";
    }
    if (joined.find(expected) != std::string::npos) break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  pool.SetStateListener(nullptr);
  INFO(joined);
  CHECK_THAT(joined, Catch::Contains(expected));
}

TEST_CASE("harness pool: a run on a suspect harness that comes back in time is not abandoned") {
  FakeNode a;
  PoolOptions options = kFast;
  options.gone_after_s = 30;
  HarnessPool pool({a.address}, "", nullptr, options);
  REQUIRE(Reaches(pool, a.address, HarnessState::kHealthy));
  a.service.hold_runs = true;
  Recorder recorder;
  absl::StatusOr<HarnessRun> result = absl::UnknownError("not run");
  std::thread evaluation = recorder.Start(pool, &result);
  for (int i = 0; i < 500 && a.service.evaluations.load() == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  a.service.hang = true;
  CHECK(Reaches(pool, a.address, HarnessState::kSuspect));
  a.service.hang = false;
  a.service.hold_runs = false;
  evaluation.join();
  REQUIRE(result.ok());
  REQUIRE(recorder.ends.size() == 1);
  CHECK(recorder.ends[0].outcome == "verdict");
  CHECK(a.service.evaluations.load() == 1);
}

TEST_CASE("harness pool: with no healthy harness an evaluation waits, then fails naming each "
          "harness's state") {
  FakeNode a;
  a.service.hang = true;
  PoolOptions options = kFast;
  options.wait_s = 2;
  // Port 1 on loopback: nothing listens there.
  HarnessPool pool({a.address, "127.0.0.1:1"}, "", nullptr, options);
  std::atomic<bool> cancelled{false};
  Recorder recorder;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<HarnessRun> result =
      pool.Evaluate(Request(), "host", recorder.Observer(), cancelled);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsUnavailable(result.status()));
  CHECK(waited >= 1.9);
  const std::string message(result.status().message());
  CHECK_THAT(message, Catch::Contains("no healthy harness serving backend host for 2 s"));
  CHECK_THAT(message, Catch::Contains(a.address + " gone: DEADLINE_EXCEEDED"));
  CHECK_THAT(message, Catch::Contains("127.0.0.1:1 gone: UNAVAILABLE"));
  CHECK(recorder.ends.empty());
  // Cancelled while waiting: CANCELLED at once.
  cancelled = true;
  CHECK(absl::IsCancelled(
      pool.Evaluate(Request(), "host", recorder.Observer(), cancelled).status()));
}

TEST_CASE("harness pool: a harness that restarted gets the definition again before its next run") {
  FakeNode a;
  HarnessPool pool({a.address}, "", nullptr, kFast);
  REQUIRE(Reaches(pool, a.address, HarnessState::kHealthy));
  v1::Definition def;
  def.set_name("scale_add_f32");
  REQUIRE(pool.RegisterDefinition(def, {}).ok());
  CHECK(a.service.puts.load() == 1);
  std::atomic<bool> cancelled{false};
  Recorder recorder;
  REQUIRE(pool.Evaluate(Request(), "host", recorder.Observer(), cancelled).ok());
  CHECK(a.service.puts.load() == 1);  // it has it
  // A new process answers at the same address (between two probes: never seen down).
  a.service.started_unix_ms = 2000;
  std::this_thread::sleep_for(milliseconds(300));
  REQUIRE(pool.Evaluate(Request(), "host", recorder.Observer(), cancelled).ok());
  CHECK(a.service.puts.load() == 2);
  CHECK(StateOf(pool, a.address) == HarnessState::kHealthy);
}

TEST_CASE("harness pool: a run goes only where its language runs, with the caller's authorization, "
          "and every event reaches the observer") {
  FakeNode no_torch, with_torch;
  no_torch.service.python = "unavailable: python3 cannot import torch";
  with_torch.service.python = "runs on host (python3.11, torch 2.4)";
  HarnessPool pool({no_torch.address, with_torch.address}, "pool-token", nullptr, kFast);
  REQUIRE(Reaches(pool, no_torch.address, HarnessState::kHealthy));
  REQUIRE(Reaches(pool, with_torch.address, HarnessState::kHealthy));
  std::atomic<bool> cancelled{false};
  int events = 0;
  AttemptObserver observer;
  observer.authorization = "Bearer team-token";
  observer.event = [&events](const std::string&, const v1::EvaluateEvent&) { ++events; };
  const v1::EvaluateRequest request = Request();
  HarnessPool::OpenRunStream open = [&request](v1::Harness::Stub& stub, grpc::ClientContext* c) {
    return stub.Evaluate(c, request);
  };
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<HarnessRun> run =
        pool.RunOnPool("scale_add_f32", open, "host", observer, cancelled, 1, "python");
    REQUIRE(run.ok());
    CHECK(run->harness == with_torch.address);
  }
  CHECK(no_torch.service.evaluations == 0);
  CHECK(with_torch.service.evaluations == 4);
  CHECK(events == 8);  // admitted and final, per run
  {
    std::lock_guard<std::mutex> lock(with_torch.service.auth_mu);
    for (const std::string& a : with_torch.service.authorizations) CHECK(a == "Bearer team-token");
  }
  // A language both run (or none named) may go to either; without the caller's, the pool's token.
  absl::StatusOr<HarnessRun> any =
      pool.RunOnPool("scale_add_f32", open, "host", AttemptObserver{}, cancelled, 1, "cpp");
  REQUIRE(any.ok());
  FakeHarness& took = any->harness == no_torch.address ? no_torch.service : with_torch.service;
  std::lock_guard<std::mutex> lock(took.auth_mu);
  REQUIRE_FALSE(took.authorizations.empty());
  CHECK(took.authorizations.back() == "Bearer pool-token");
}

TEST_CASE("harness pool: a run no harness of the fleet can take is refused at once, naming what "
          "each runs, also while one is down") {
  FakeNode a, b;
  a.service.python = "unavailable: python3 cannot import torch";
  b.service.python = "unavailable: no backend of this node runs it";
  PoolOptions options = kFast;
  options.wait_s = 30;
  HarnessPool pool({a.address, b.address}, "", nullptr, options);
  REQUIRE(Reaches(pool, a.address, HarnessState::kHealthy));
  REQUIRE(Reaches(pool, b.address, HarnessState::kHealthy));
  std::atomic<bool> cancelled{false};
  Recorder recorder;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<HarnessRun> cuda = pool.Evaluate(Request(), "cuda", recorder.Observer(), cancelled);
  REQUIRE_FALSE(cuda.ok());
  CHECK(absl::IsFailedPrecondition(cuda.status()));
  CHECK_THAT(std::string(cuda.status().message()),
             Catch::Equals("no harness of the fleet runs backend cuda (" + a.address +
                           " runs host; " + b.address + " runs host)"));
  const v1::EvaluateRequest request = Request();
  HarnessPool::OpenRunStream open = [&request](v1::Harness::Stub& stub, grpc::ClientContext* c) {
    return stub.Evaluate(c, request);
  };
  absl::StatusOr<HarnessRun> python =
      pool.RunOnPool("scale_add_f32", open, "host", AttemptObserver{}, cancelled, 1, "python");
  REQUIRE_FALSE(python.ok());
  CHECK(absl::IsFailedPrecondition(python.status()));
  CHECK_THAT(std::string(python.status().message()),
             Catch::Contains(a.address + ": python unavailable: python3 cannot import torch"));
  // A harness that stopped answering still runs what it said it runs: no reason to wait for it.
  a.service.hang = true;
  REQUIRE(Reaches(pool, a.address, HarnessState::kGone));
  CHECK(absl::IsFailedPrecondition(
      pool.Evaluate(Request(), "cuda", recorder.Observer(), cancelled).status()));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(recorder.ends.empty());
  CHECK(a.service.evaluations == 0);
  CHECK(b.service.evaluations == 0);
}

}  // namespace
}  // namespace kiln::controller

namespace kiln::controller {
namespace {

Registration Solution(const std::string& name) {
  v1::PutSolutionRequest request;
  request.set_name(name);
  request.mutable_solution()->set_name(name);
  return {"solution", name, request.SerializeAsString()};
}

Registration Settings(const std::string& definition) {
  v1::SetDefinitionSettingsRequest request;
  request.set_definition(definition);
  request.set_reset(true);
  return {"settings", definition, request.SerializeAsString()};
}

bool Offered(const HarnessPool& pool, const std::string& address) {
  for (const std::string& a : pool.Healthy()) {
    if (a == address) return true;
  }
  return false;
}

// Waits up to 5 s for `address` to be offered work (or, with `offered` false, not).
bool BecomesOffered(const HarnessPool& pool, const std::string& address, bool offered = true) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Offered(pool, address) == offered) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

TEST_CASE("harness pool: what a harness missed while down is replayed to it, in order, before "
          "it is offered work") {
  FakeNode a, b;
  HarnessPool pool({a.address, b.address}, "", nullptr, kFast);
  REQUIRE(Reaches(pool, a.address, HarnessState::kHealthy));
  REQUIRE(Reaches(pool, b.address, HarnessState::kHealthy));
  b.service.hang = true;
  REQUIRE(Reaches(pool, b.address, HarnessState::kSuspect));
  // Registered through the front door while b was down: a took them.
  pool.Remember(Solution("s1"), {a.address});
  pool.Remember(Settings("scale_add_f32"), {a.address});
  pool.Remember(Solution("s2"), {a.address});
  pool.Remember(Solution("s1"), {a.address});  // replaced: s1 is sent once, after s2
  CHECK(Offered(pool, a.address));
  CHECK(b.service.Taken().empty());
  b.service.hang = false;
  REQUIRE(BecomesOffered(pool, b.address));
  CHECK(b.service.Taken() == std::vector<std::string>{"settings scale_add_f32 reset=1",
                                                      "solution s2 replace=1",
                                                      "solution s1 replace=1"});
  CHECK(a.service.Taken().empty());  // a took them itself (through the front door), not again
}

TEST_CASE("harness pool: a healthy harness that missed an entry is offered no work until it "
          "took it") {
  FakeNode a, b;
  PoolOptions slow = kFast;
  slow.probe_interval_s = 0.5;  // time to see b left out before its next probe
  slow.gone_after_s = 5;
  HarnessPool pool({a.address, b.address}, "", nullptr, slow);
  REQUIRE(Reaches(pool, a.address, HarnessState::kHealthy));
  REQUIRE(Reaches(pool, b.address, HarnessState::kHealthy));
  pool.Remember(Solution("s1"), {a.address});
  CHECK(Offered(pool, a.address));
  CHECK_FALSE(Offered(pool, b.address));
  // An evaluation meanwhile goes to a.
  std::atomic<bool> cancelled{false};
  Recorder recorder;
  auto run = pool.Evaluate(Request(), "host", recorder.Observer(), cancelled);
  REQUIRE(run.ok());
  CHECK(run->harness == a.address);
  REQUIRE(BecomesOffered(pool, b.address));
  CHECK(b.service.Taken() == std::vector<std::string>{"solution s1 replace=1"});
}

TEST_CASE("harness pool: a restarted harness takes the whole journal again; a refused replay "
          "keeps it out, naming the entry") {
  FakeNode a;
  HarnessPool pool({a.address}, "", nullptr, kFast);
  REQUIRE(Reaches(pool, a.address, HarnessState::kHealthy));
  pool.Remember(Solution("s1"), {a.address});
  pool.Remember(Settings("scale_add_f32"), {a.address});
  CHECK(a.service.Taken().empty());
  a.service.started_unix_ms = 2000;  // a new process at the same address
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (a.service.Taken().size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  CHECK(a.service.Taken() == std::vector<std::string>{"solution s1 replace=1",
                                                      "settings scale_add_f32 reset=1"});
  REQUIRE(BecomesOffered(pool, a.address));
  // Restarted again, and now it refuses the solution: answering, but not offered work.
  a.service.refuse_solutions = true;
  a.service.started_unix_ms = 3000;
  REQUIRE(Reaches(pool, a.address, HarnessState::kSuspect));
  CHECK_FALSE(Offered(pool, a.address));
  bool named = false;
  for (const HarnessHealth& h : pool.Health()) {
    named = named || h.last_error.find("replaying solution s1 was refused") != std::string::npos;
  }
  CHECK(named);
  a.service.refuse_solutions = false;
  REQUIRE(BecomesOffered(pool, a.address));
}

TEST_CASE("harness pool: an address a configured name gains is a new harness, which takes the "
          "journal first; a journal loaded at start reaches every harness") {
  FakeNode a, b, c;
  std::mutex mu;
  std::vector<std::string> fleet = {a.address, b.address};
  PoolOptions options = kFast;
  options.resolve_interval_s = 0.1;
  options.resolve = [&](const std::string& name) {
    std::lock_guard<std::mutex> lock(mu);
    return name == "fleet:1" ? fleet : std::vector<std::string>{name};
  };
  HarnessPool pool({"fleet:1"}, "", nullptr, options);
  CHECK(pool.addresses() == std::vector<std::string>{a.address, b.address});
  pool.LoadJournal({Solution("s0")});
  REQUIRE(BecomesOffered(pool, a.address));
  REQUIRE(BecomesOffered(pool, b.address));
  CHECK(a.service.Taken() == std::vector<std::string>{"solution s0 replace=1"});
  CHECK(b.service.Taken() == std::vector<std::string>{"solution s0 replace=1"});
  pool.Remember(Solution("s1"), {a.address, b.address});
  {
    std::lock_guard<std::mutex> lock(mu);
    fleet.push_back(c.address);  // a harness pod started on a new node
  }
  REQUIRE(BecomesOffered(pool, c.address));
  CHECK(pool.addresses() == std::vector<std::string>{a.address, b.address, c.address});
  CHECK(c.service.Taken() ==
        std::vector<std::string>{"solution s0 replace=1", "solution s1 replace=1"});
  CHECK(a.service.Taken().size() == 1);  // took s1 itself
}

}  // namespace
}  // namespace kiln::controller
