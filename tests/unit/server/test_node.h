// A kiln-harness started in-process for tests: a temp data dir, 127.0.0.1:0, the kiln-worker of
// this build, and a generated stub talking to it.
#ifndef KILN_TESTS_UNIT_SERVER_TEST_NODE_H_
#define KILN_TESTS_UNIT_SERVER_TEST_NODE_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/common/files.h"
#include "harness/definitions/builtins.h"
#include "kiln/v1/harness.grpc.pb.h"
#include "server/harness_server.h"

namespace kiln::testing {

inline HarnessOptions TestOptions(const std::string& data_dir) {
  HarnessOptions o;
  o.listen = "127.0.0.1:0";
  o.data_dir = data_dir;
  o.worker_path = KILN_BINARY_DIR "/bin/kiln-worker";
  o.default_mode = "kernelbench";
  o.host_flush_mb = 16;  // not kernelbench's 256 MiB on every timed call
  o.quiet = true;
  // These nodes run the host backend, where nothing needs the node's Python: leaving its probe
  // out spares every node seconds of importing torch (and its teardown the wait for it).
  o.python = "none";
  return o;
}

class TestNode {
 public:
  explicit TestNode(HarnessOptions options = {}) {
    dir_ = *MakeTempDir("", "kiln-server-test");
    if (options.data_dir.empty()) {
      HarnessOptions defaults = TestOptions(dir_ + "/data");
      defaults.max_queue = options.max_queue;
      if (options.python != HarnessOptions().python) defaults.python = options.python;
      defaults.warm_references = options.warm_references;
      defaults.keep_reference_files = options.keep_reference_files;
      defaults.python_spares = options.python_spares;
      defaults.spares_on_host = options.spares_on_host;
      defaults.scratch_dir = options.scratch_dir;
      defaults.scratch_limit_bytes = options.scratch_limit_bytes;
      defaults.data_dir_limit_bytes = options.data_dir_limit_bytes;
      options = defaults;
    }
    auto server = HarnessServer::Start(options);
    if (!server.ok()) throw std::runtime_error(server.status().ToString());
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    stub_ = v1::Harness::NewStub(channel_);
  }
  ~TestNode() {
    stub_.reset();
    server_.reset();  // drains
    (void)RemoveTree(dir_);
  }

  v1::Harness::Stub& stub() { return *stub_; }
  // The node's own folder (its data dir is dir()/data unless the options named one).
  const std::string& dir() const { return dir_; }
  HarnessServer& server() { return *server_; }

 private:
  std::string dir_;
  std::unique_ptr<HarnessServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Harness::Stub> stub_;
};

// The standard health service's answer for the whole server: 1 SERVING, 2 NOT_SERVING, -1 when
// the call failed.
inline int HealthStatus(const std::string& address) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  // HealthCheckRequest{service: ""}, the field written out (an empty message is not accepted).
  grpc::Slice encoded(std::string("\x0a\x00", 2));
  grpc::ByteBuffer request(&encoded, 1);
  auto call = stub.PrepareUnaryCall(&ctx, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  if (!cq.Next(&tag, &ok) || !ok || !status.ok()) return -1;
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return -1;
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  // HealthCheckResponse{status: N} is the two bytes 0x08 N.
  return bytes.size() == 2 && bytes[0] == '\x08' ? bytes[1] : -1;
}

struct EvaluateOutcome {
  grpc::Status status;
  std::vector<v1::EvaluateEvent> events;
  // The final Run (empty when the stream ended without one).
  v1::Run run() const {
    return !events.empty() && events.back().has_run() ? events.back().run() : v1::Run();
  }
};

inline EvaluateOutcome Evaluate(v1::Harness::Stub& stub, const v1::EvaluateRequest& request) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
  EvaluateOutcome out;
  auto reader = stub.Evaluate(&ctx, request);
  v1::EvaluateEvent event;
  while (reader->Read(&event)) out.events.push_back(event);
  out.status = reader->Finish();
  return out;
}

// A cpp solution of the built-in vector_add_f32 whose loop body is `body` (a, b, c, i in scope).
inline v1::Solution VectorAddSolution(const std::string& name, const std::string& body,
                                      const std::string& prelude = "") {
  v1::Solution s;
  s.set_name(name);
  s.set_definition("vector_add_f32");
  s.set_author("tests");
  s.mutable_spec()->set_language("cpp");
  s.mutable_spec()->add_target_hardware("cpu");
  s.mutable_spec()->set_entry_point("solution.cc::run");
  v1::SourceFile* f = s.add_sources();
  f->set_path("solution.cc");
  f->set_content(prelude + R"(#include <kiln/abi.h>
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* c = (float*)args[2].data;
  for (int64_t i = 0; i < args[0].shape[0]; ++i) {
)" + body + R"(
  }
  return 0;
}
)");
  return s;
}

inline v1::Workload VectorAddWorkload(int64_t n, const std::string& uuid) {
  v1::Workload w;
  w.set_uuid(uuid);
  v1::AxisValue* axis = w.add_axes();
  axis->set_name("n");
  axis->set_value(n);
  for (const char* name : {"a", "b"}) {
    v1::WorkloadInput* in = w.add_inputs();
    in->set_name(name);
    in->set_kind(v1::WorkloadInput::RANDOM);
  }
  return w;
}

inline v1::EvaluateRequest VectorAddRequest(const v1::Solution& solution, int64_t n = 4096) {
  v1::EvaluateRequest r;
  r.set_definition("vector_add_f32");
  *r.mutable_solution() = solution;
  *r.add_workloads() = VectorAddWorkload(n, "test-n" + std::to_string(n));
  r.set_mode("kernelbench");
  return r;
}

// A copy of the built-in definition `name` (empty when there is none), to register changed.
inline v1::Definition BuiltinCopy(const std::string& name) {
  auto builtins = LoadBuiltinDefinitions();
  if (builtins.ok()) {
    for (const BuiltinDefinition& b : *builtins) {
      if (b.definition.name() == name) return b.definition;
    }
  }
  return v1::Definition();
}

// Registers `def`, without workloads.
inline grpc::Status PutDefinition(v1::Harness::Stub& stub, const v1::Definition& def,
                                  bool allow_unevaluable = false) {
  grpc::ClientContext ctx;
  v1::PutDefinitionRequest put;
  *put.mutable_definition() = def;
  put.set_allow_unevaluable(allow_unevaluable);
  v1::PutDefinitionResponse response;
  return stub.PutDefinition(&ctx, put, &response);
}

inline int64_t RunsArchived(v1::Harness::Stub& stub) {
  grpc::ClientContext ctx;
  v1::NodeInfo info;
  grpc::Status s = stub.GetNodeInfo(&ctx, v1::GetNodeInfoRequest(), &info);
  return s.ok() ? info.runs_archived() : -1;
}

// The content of each artifact of `kind` archived with run `run_id`, by artifact name ("w0",
// "w0_reference", ...); empty when the run cannot be read.
inline std::map<std::string, std::string> Artifacts(v1::Harness::Stub& stub,
                                                    const std::string& run_id,
                                                    const std::string& kind) {
  std::map<std::string, std::string> out;
  grpc::ClientContext ctx;
  v1::GetRunRequest get;
  get.set_run_id(run_id);
  v1::Run run;
  if (!stub.GetRun(&ctx, get, &run).ok()) return out;
  for (const v1::ArtifactRef& a : run.artifacts()) {
    if (a.kind() != kind) continue;
    grpc::ClientContext actx;
    v1::GetArtifactRequest request;
    request.set_sha256(a.sha256());
    v1::Artifact artifact;
    if (stub.GetArtifact(&actx, request, &artifact).ok()) out[a.name()] = artifact.content();
  }
  return out;
}

// The text of each worker log archived with run `run_id`, by artifact name ("w0", "w1", ...).
inline std::map<std::string, std::string> WorkerLogs(v1::Harness::Stub& stub,
                                                     const std::string& run_id) {
  return Artifacts(stub, run_id, "worker_log");
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_SERVER_TEST_NODE_H_
