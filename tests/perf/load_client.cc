// Load driver for tests/perf/load_test.sh: CLIENTS threads, each submitting RUNS evaluations of a
// small C++ vector_add_f32 solution to one kiln-harness, one after another, over its own
// channel. Prints one line of key=value results and exits 0 iff every submission was admitted
// and ended with a final Run whose status is PASSED.
//
//   load_client --server HOST:PORT [--clients 8] [--runs 50] [--token TOKEN]
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/model/json_interop.h"
#include "kiln/v1/harness.grpc.pb.h"

namespace {

struct Options {
  std::string server;
  int clients = 8;
  int runs = 50;
  std::string token;
};

struct Totals {
  std::mutex mu;
  std::map<std::string, int> outcomes;  // final status name, or the gRPC error code
  std::vector<double> seconds;          // submit to final event, per run
  int lost = 0;                         // call ended OK without a final Run
};

// Each client compiles its own source once (a distinct comment), then hits the compile cache.
kiln::v1::EvaluateRequest Request(int client) {
  kiln::v1::EvaluateRequest r;
  r.set_definition("vector_add_f32");
  r.set_mode("kernelbench");
  kiln::v1::Solution* s = r.mutable_solution();
  s->set_name(absl::StrCat("load-", client));
  s->set_definition("vector_add_f32");
  s->set_author("load_test");
  s->mutable_spec()->set_language("cpp");
  s->mutable_spec()->add_target_hardware("cpu");
  s->mutable_spec()->set_entry_point("solution.cc::run");
  kiln::v1::SourceFile* f = s->add_sources();
  f->set_path("solution.cc");
  f->set_content(absl::StrCat("// load client ", client, R"(
#include <kiln/abi.h>
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* c = (float*)args[2].data;
  for (int64_t i = 0; i < args[0].shape[0]; ++i) c[i] = a[i] + b[i];
  return 0;
}
)"));
  kiln::v1::Workload* w = r.add_workloads();
  w->set_uuid("load-n4096");
  kiln::v1::AxisValue* n = w->add_axes();
  n->set_name("n");
  n->set_value(4096);
  for (const char* name : {"a", "b"}) {
    kiln::v1::WorkloadInput* in = w->add_inputs();
    in->set_name(name);
    in->set_kind(kiln::v1::WorkloadInput::RANDOM);
  }
  return r;
}

void Client(const Options& o, int index, Totals& totals) {
  auto channel = grpc::CreateChannel(o.server, grpc::InsecureChannelCredentials());
  auto stub = kiln::v1::Harness::NewStub(channel);
  const kiln::v1::EvaluateRequest request = Request(index);
  for (int i = 0; i < o.runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(30));
    if (!o.token.empty()) ctx.AddMetadata("authorization", "Bearer " + o.token);
    auto reader = stub->Evaluate(&ctx, request);
    kiln::v1::EvaluateEvent event;
    std::string outcome;
    while (reader->Read(&event)) {
      if (event.has_run()) outcome = std::string(kiln::StatusName(event.run().status()));
    }
    grpc::Status status = reader->Finish();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard<std::mutex> lock(totals.mu);
    if (!status.ok()) {
      outcome = absl::StrCat("rpc_", status.error_code(), ":", status.error_message());
    } else if (outcome.empty()) {
      ++totals.lost;
      outcome = "lost";
    }
    ++totals.outcomes[outcome];
    totals.seconds.push_back(s);
  }
}

bool Parse(int argc, char** argv, Options* o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--server") {
      o->server = value;
    } else if (flag == "--clients") {
      o->clients = std::atoi(value.c_str());
    } else if (flag == "--runs") {
      o->runs = std::atoi(value.c_str());
    } else if (flag == "--token") {
      o->token = value;
    } else {
      return false;
    }
  }
  return !o->server.empty() && o->clients > 0 && o->runs > 0 && argc % 2 == 1;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: load_client --server HOST:PORT [--clients N] [--runs N] [--token T]\n");
    return 2;
  }
  Totals totals;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c) {
    threads.emplace_back([&o, c, &totals] { Client(o, c, totals); });
  }
  for (std::thread& t : threads) t.join();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int submitted = o.clients * o.runs;
  const int passed = totals.outcomes["PASSED"];
  std::printf(
      "submitted=%d passed=%d lost=%d wall_s=%.1f runs_per_s=%.2f p50_s=%.2f p95_s=%.2f "
      "max_s=%.2f\n",
      submitted, passed, totals.lost, wall, submitted / wall, Percentile(totals.seconds, 0.5),
      Percentile(totals.seconds, 0.95), Percentile(totals.seconds, 1.0));
  for (const auto& [outcome, n] : totals.outcomes) {
    if (outcome != "PASSED") std::printf("outcome %s: %d\n", outcome.c_str(), n);
  }
  return passed == submitted ? 0 : 1;
}
