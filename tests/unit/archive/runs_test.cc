#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::MakeRun;
using archive_test::MakeTrace;
using archive_test::OpenArchive;
using archive_test::TempDir;

// Drives one run through every stage the way the harness does.
void EvaluateRun(Archive& archive, const v1::Run& run) {
  REQUIRE(archive.CreateRun(run).ok());
  REQUIRE(archive.UpdateRunState(run.run_id(), v1::RUN_COMPILING).ok());
  REQUIRE(archive.RecordCompile(run.run_id(), "main.cc:1: warning: unused", false, 1.5).ok());
  REQUIRE(archive.UpdateRunState(run.run_id(), v1::RUN_VERIFYING).ok());
  REQUIRE(archive.PutTrace(run.run_id(), 1, MakeTrace("w1", v1::PASSED, 4.0, 3.0)).ok());
  REQUIRE(archive.PutTrace(run.run_id(), 0, MakeTrace("w0", v1::PASSED, 2.0, 1.0)).ok());
  REQUIRE(archive.PutTrace(run.run_id(), 2, MakeTrace("w2", v1::PASSED, 0, 0)).ok());
  REQUIRE(archive.UpdateRunState(run.run_id(), v1::RUN_TIMING).ok());
  v1::Run final_run;
  final_run.set_run_id(run.run_id());
  final_run.set_status(v1::PASSED);
  final_run.set_reason("all workloads passed");
  final_run.set_timing_s(7.25);
  REQUIRE(archive.FinishRun(final_run).ok());
}

TEST_CASE("a run round-trips through create, stage changes, traces and finish") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  const v1::Run created = MakeRun("run-1", "gemm", 1000);
  EvaluateRun(*archive, created);

  auto run = archive->GetRun("run-1", /*include_sources=*/false);
  REQUIRE(run.ok());
  CHECK(run->run_id() == "run-1");
  CHECK(run->definition() == "gemm");
  CHECK(run->solution_name() == "sol-run-1");  // taken from the solution
  CHECK(run->solution_hash() == "hash-run-1");
  CHECK(run->author() == "alice");
  CHECK(run->principal() == "team-a");
  CHECK(run->state() == v1::RUN_DONE);
  CHECK(run->status() == v1::PASSED);
  CHECK(run->reason() == "all workloads passed");
  CHECK(run->mode() == "official");
  CHECK(run->backend() == "host");
  CHECK(run->created_unix_ms() == 1000);
  CHECK(run->finished_unix_ms() > 0);
  CHECK(run->compile_s() == 1.5);  // reported by RecordCompile
  CHECK(run->timing_s() == 7.25);  // reported by FinishRun
  CHECK(run->compile_log() == "main.cc:1: warning: unused");
  CHECK_FALSE(run->compile_cache_hit());

  REQUIRE(run->traces_size() == 3);
  CHECK(run->traces(0).workload().uuid() == "w0");
  CHECK(run->traces(1).workload().uuid() == "w1");
  CHECK(run->traces(2).workload().uuid() == "w2");
  CHECK(run->traces(1).evaluation().log() == "log of w1");

  // The solution is there without its sources.
  CHECK(run->solution().name() == "sol-run-1");
  CHECK(run->solution().spec().entry_point() == "main.cc::run");
  CHECK(run->solution().sources_size() == 0);

  int sources = 0, logs = 0;
  for (const v1::ArtifactRef& ref : run->artifacts()) {
    if (ref.kind() == "source") ++sources;
    if (ref.kind() == "compiler_log") ++logs;
    CHECK(ref.sha256().size() == 64);
    CHECK(ref.size() > 0);
  }
  CHECK(sources == 2);
  CHECK(logs == 1);
}

TEST_CASE("the baselines a run asked for are kept with it, in order") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  v1::Run run = MakeRun("run-1", "gemm", 1000);
  run.add_baselines("solution:flashinfer_wrapper_9c4b1e");
  run.add_baselines("torch_eager");
  REQUIRE(archive->CreateRun(run).ok());
  REQUIRE(archive->CreateRun(MakeRun("run-2", "gemm", 1001)).ok());
  auto stored = archive->GetRun("run-1", false);
  REQUIRE(stored.ok());
  REQUIRE(stored->baselines_size() == 2);
  CHECK(stored->baselines(0) == "solution:flashinfer_wrapper_9c4b1e");
  CHECK(stored->baselines(1) == "torch_eager");
  CHECK(archive->GetRun("run-2", false)->baselines_size() == 0);
}

TEST_CASE("run means cover only the traces that were timed") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  EvaluateRun(*archive, MakeRun("run-1", "gemm", 1000));
  auto list = archive->ListRuns({});
  REQUIRE(list.ok());
  REQUIRE(list->runs_size() == 1);
  const v1::RunSummary& summary = list->runs(0);
  CHECK(summary.workload_count() == 3);
  CHECK(summary.mean_latency_ms() == Approx(3.0));  // (2 + 4) / 2; w2 was not timed
  CHECK(summary.mean_speedup() == Approx(2.0));
  CHECK(summary.status() == v1::PASSED);
  CHECK(summary.state() == v1::RUN_DONE);
  CHECK(summary.author() == "alice");
  CHECK(summary.solution_name() == "sol-run-1");
}

TEST_CASE("GetRun with sources returns them in their original order") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  const v1::Run created = MakeRun("run-1", "gemm", 1000);
  EvaluateRun(*archive, created);
  auto run = archive->GetRun("run-1", /*include_sources=*/true);
  REQUIRE(run.ok());
  REQUIRE(run->solution().sources_size() == 2);
  for (int i = 0; i < 2; ++i) {
    CHECK(run->solution().sources(i).path() == created.solution().sources(i).path());
    CHECK(run->solution().sources(i).content() == created.solution().sources(i).content());
  }
}

TEST_CASE("a trace stored twice at one index keeps the latest") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->CreateRun(MakeRun("run-1", "gemm", 1000)).ok());
  REQUIRE(archive->PutTrace("run-1", 0, MakeTrace("w0", v1::RUNTIME_ERROR, 0, 0)).ok());
  REQUIRE(archive->PutTrace("run-1", 0, MakeTrace("w0", v1::PASSED, 5.0, 2.0)).ok());
  auto run = archive->GetRun("run-1", false);
  REQUIRE(run.ok());
  REQUIRE(run->traces_size() == 1);
  CHECK(run->traces(0).evaluation().status() == v1::PASSED);
}

TEST_CASE("finishing without a status derives it from the traces") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->CreateRun(MakeRun("run-1", "gemm", 1000)).ok());
  REQUIRE(archive->PutTrace("run-1", 0, MakeTrace("w0", v1::PASSED, 1.0, 1.0)).ok());
  REQUIRE(archive->PutTrace("run-1", 1, MakeTrace("w1", v1::INCORRECT_NUMERICAL, 0, 0)).ok());
  v1::Run final_run;
  final_run.set_run_id("run-1");
  REQUIRE(archive->FinishRun(final_run).ok());
  auto run = archive->GetRun("run-1", false);
  REQUIRE(run.ok());
  CHECK(run->status() == v1::INCORRECT_NUMERICAL);
  CHECK(run->state() == v1::RUN_DONE);
}

TEST_CASE("time spent in a stage is measured when nothing reports it") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->CreateRun(MakeRun("run-1", "gemm", 1000)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  REQUIRE(archive->UpdateRunState("run-1", v1::RUN_COMPILING).ok());
  v1::Run final_run;
  final_run.set_run_id("run-1");
  final_run.set_status(v1::COMPILE_ERROR);
  REQUIRE(archive->FinishRun(final_run).ok());
  auto run = archive->GetRun("run-1", false);
  REQUIRE(run.ok());
  CHECK(run->queued_s() >= 0.025);  // at least the sleep, however loaded the machine
  CHECK(run->verify_s() == 0);      // never entered
}

TEST_CASE("an unknown run is NOT_FOUND and named") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  auto run = archive->GetRun("abc", false);
  REQUIRE(!run.ok());
  CHECK(run.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(run.status().message()) == "run 'abc' not found");
  CHECK(archive->UpdateRunState("abc", v1::RUN_TIMING).code() == absl::StatusCode::kNotFound);
  CHECK(archive->PutTrace("abc", 0, MakeTrace("w", v1::PASSED, 1, 1)).code() ==
        absl::StatusCode::kNotFound);
  CHECK(archive->RecordCompile("abc", "log", false, 1).code() == absl::StatusCode::kNotFound);
  v1::Run final_run;
  final_run.set_run_id("abc");
  CHECK(archive->FinishRun(final_run).code() == absl::StatusCode::kNotFound);
}

TEST_CASE("a run id is taken once and must be set") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->CreateRun(MakeRun("run-1", "gemm", 1000)).ok());
  absl::Status again = archive->CreateRun(MakeRun("run-1", "gemm", 2000));
  CHECK(again.code() == absl::StatusCode::kAlreadyExists);
  CHECK_THAT(std::string(again.message()), Catch::Contains("run-1"));
  CHECK(archive->CreateRun(MakeRun("", "gemm", 2000)).code() == absl::StatusCode::kInvalidArgument);
  auto count = archive->CountRuns();
  REQUIRE(count.ok());
  CHECK(*count == 1);
}

TEST_CASE("a finished run no longer changes state") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  EvaluateRun(*archive, MakeRun("run-1", "gemm", 1000));
  CHECK(archive->UpdateRunState("run-1", v1::RUN_TIMING).code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(archive->UpdateRunState("run-1", v1::RUN_STATE_UNSPECIFIED).code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("imported runs come back as they were stored, all or none") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  v1::Run done = MakeRun("imported-1", "gemm", 500);
  done.set_state(v1::RUN_DONE);
  done.set_status(v1::TIMEOUT);
  done.set_compile_log("ok");
  *done.add_traces() = MakeTrace("w0", v1::TIMEOUT, 0, 0);
  REQUIRE(archive->ImportRuns({done, MakeRun("imported-2", "gemm", 600)}).ok());
  auto run = archive->GetRun("imported-1", true);
  REQUIRE(run.ok());
  CHECK(run->status() == v1::TIMEOUT);
  CHECK(run->state() == v1::RUN_DONE);
  CHECK(run->compile_log() == "ok");
  CHECK(run->traces_size() == 1);
  CHECK(run->solution().sources_size() == 2);

  // A batch with a taken id stores nothing.
  absl::Status clash = archive->ImportRuns({MakeRun("imported-3", "gemm", 700), done});
  CHECK(clash.code() == absl::StatusCode::kAlreadyExists);
  CHECK(archive->GetRun("imported-3", false).status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace kiln
