#include "report/report.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

using namespace kiln;

namespace {

v1::Trace MakeTrace(const std::string& uuid, v1::EvaluationStatus status, double latency,
                    double ref, double abs_err) {
  v1::Trace t;
  t.set_definition("scale_add_f32");
  t.mutable_workload()->set_uuid(uuid);
  auto* axis = t.mutable_workload()->add_axes();
  axis->set_name("n");
  axis->set_value(1000);
  t.mutable_evaluation()->set_status(status);
  if (latency > 0) {
    auto* perf = t.mutable_evaluation()->mutable_performance();
    perf->set_latency_ms(latency);
    perf->set_reference_latency_ms(ref);
    perf->set_speedup_factor(ref / latency);
  }
  if (abs_err >= 0) {
    t.mutable_evaluation()->mutable_correctness()->set_max_absolute_error(abs_err);
    t.mutable_evaluation()->mutable_correctness()->set_max_relative_error(abs_err / 2);
  }
  return t;
}

}  // namespace

TEST_CASE("the trace table shows one row per workload with absent values as dashes") {
  v1::Run run;
  *run.add_traces() = MakeTrace("0123456789abcdef", v1::PASSED, 0.153, 0.41, 0);
  *run.add_traces() = MakeTrace("fedcba9876543210", v1::COMPILE_ERROR, 0, 0, -1);
  std::string table = cli::TraceTable(run.traces());
  CHECK(table.find("latency ms") != std::string::npos);
  CHECK(table.find("01234567  n=1000") != std::string::npos);
  CHECK(table.find("fedcba98") != std::string::npos);
  CHECK(table.find("fedcba987") == std::string::npos);
  CHECK(table.find("0.153") != std::string::npos);
  CHECK(table.find("2.68x") != std::string::npos);
  CHECK(table.find("COMPILE_ERROR") != std::string::npos);
  // Header, rule, two rows.
  CHECK(std::count(table.begin(), table.end(), '\n') == 4);
}

TEST_CASE("workloads whose ids share 8 characters are told apart in the table and the failures") {
  // As in controller/examples/matmul_f32_k128.jsonl: two UUIDs starting 6f1c2a10.
  v1::Run run;
  run.set_run_id("run-1");
  run.set_state(v1::RUN_DONE);
  run.set_status(v1::INCORRECT_NUMERICAL);
  *run.add_traces() = MakeTrace("6f1c2a10-0b5e-4c1d-9a1e-000000000001", v1::PASSED, 0.1, 0.2, 0);
  v1::Trace wrong =
      MakeTrace("6f1c2a10-7d21-4c1d-9a1e-000000000002", v1::INCORRECT_NUMERICAL, 0, 0, 3);
  wrong.mutable_kiln()->set_reason("output 'c' trial 0: FAIL");
  *run.add_traces() = wrong;
  const std::string table = cli::TraceTable(run.traces());
  CHECK(table.find("6f1c2a10-0  n=1000") != std::string::npos);
  CHECK(table.find("6f1c2a10-7  n=1000") != std::string::npos);
  const std::string failures = cli::FailureDetails(run);
  CHECK(failures.find("(6f1c2a10-7)") != std::string::npos);
}

TEST_CASE("the summary of a passing run gives the count, mean speedup and mode") {
  v1::Run run;
  run.set_run_id("run-1");
  run.set_state(v1::RUN_DONE);
  run.set_status(v1::PASSED);
  run.set_mode("official");
  *run.add_traces() = MakeTrace("a", v1::PASSED, 1.0, 2.0, 0);
  *run.add_traces() = MakeTrace("b", v1::PASSED, 1.0, 3.0, 0);
  CHECK(cli::SummaryLine(run) ==
        "run run-1: PASSED (2/2 workloads), mean speedup 2.50x, mode official\n");
  CHECK(cli::FailureDetails(run).empty());
}

TEST_CASE("a compile error shows the compiler log") {
  v1::Run run;
  run.set_run_id("run-2");
  run.set_state(v1::RUN_DONE);
  run.set_status(v1::COMPILE_ERROR);
  run.set_reason("compilation failed");
  run.set_compile_log("kernel.cc:7:3: error: expected ';' before '}' token\n");
  *run.add_traces() = MakeTrace("a", v1::COMPILE_ERROR, 0, 0, -1);
  CHECK(cli::SummaryLine(run).find("run run-2: COMPILE_ERROR (0/1 workloads passed)") == 0);
  std::string details = cli::FailureDetails(run);
  CHECK(details.find("reason: compilation failed") != std::string::npos);
  CHECK(details.find("  kernel.cc:7:3: error") != std::string::npos);
}

TEST_CASE("workloads failing the same way are reported once") {
  v1::Run run;
  run.set_status(v1::INCORRECT_NUMERICAL);
  for (const char* id : {"aaaaaaaa1", "bbbbbbbb2"}) {
    v1::Trace t = MakeTrace(id, v1::INCORRECT_NUMERICAL, 0, 0, 1.0);
    t.mutable_kiln()->set_reason("out: 1000 of 1000 elements differ");
    *run.add_traces() = t;
  }
  std::string details = cli::FailureDetails(run);
  CHECK(details.find("workloads #1 (aaaaaaaa), #2 (bbbbbbbb): INCORRECT_NUMERICAL: out: 1000 of "
                     "1000 elements differ") != std::string::npos);
}

TEST_CASE("progress prints stage changes and finished workloads once each") {
  std::ostringstream err;
  cli::ProgressPrinter printer(err);
  v1::Progress p;
  p.set_run_id("3f2a1b2c-long-id");
  p.set_stage(v1::RUN_COMPILING);
  p.set_message("cache hit");
  printer.Print(p);
  printer.Print(p);
  p.set_stage(v1::RUN_TIMING);
  p.clear_message();
  p.set_workload_index(1);
  p.set_workload_count(5);
  *p.mutable_trace() = MakeTrace("a", v1::PASSED, 0.153, 0.41, 0);
  printer.Print(p);
  CHECK(err.str() ==
        "[run 3f2a1b2c] compiling (cache hit)\n"
        "[run 3f2a1b2c] workload 2/5 PASSED 0.153 ms (ref 0.410 ms, 2.68x)\n");
}

TEST_CASE("a failed workload's progress line shows its errors") {
  v1::Trace t = MakeTrace("a", v1::INCORRECT_NUMERICAL, 0, 0, 1.0);
  CHECK(cli::WorkloadLine(t, 1, 3) ==
        "workload 1/3 INCORRECT_NUMERICAL max abs err 1.00e+00, max rel err 5.00e-01");
}

TEST_CASE("a stage message that restates the stage replaces it") {
  std::ostringstream err;
  cli::ProgressPrinter printer(err);
  v1::Progress p;
  p.set_run_id("abc");
  p.set_stage(v1::RUN_QUEUED);
  p.set_message("queued");
  printer.Print(p);
  p.set_stage(v1::RUN_VERIFYING);
  p.set_message("workload 1/3: verifying");
  printer.Print(p);
  CHECK(err.str() == "[run abc] queued\n[run abc] workload 1/3: verifying\n");
}

TEST_CASE("failure details show a log only for what it adds to the reason") {
  v1::Run run;
  run.set_status(v1::RUNTIME_ERROR);
  run.set_reason("worker killed by SIGSEGV");
  v1::Trace t = MakeTrace("aaaaaaaa1", v1::RUNTIME_ERROR, 0, 0, -1);
  t.mutable_kiln()->set_reason("worker killed by SIGSEGV");
  t.mutable_evaluation()->set_log("worker killed by SIGSEGV\nworker log:\nkiln-worker: verify");
  *run.add_traces() = t;
  CHECK(cli::FailureDetails(run) ==
        "workload #1 (aaaaaaaa): RUNTIME_ERROR: worker killed by SIGSEGV\n"
        "  worker log:\n"
        "  kiln-worker: verify\n");
}

TEST_CASE("on a terminal stage lines are overwritten and workload lines stay") {
  std::ostringstream err;
  cli::ProgressPrinter printer(err, /*in_place=*/true);
  v1::Progress p;
  p.set_run_id("abc");
  p.set_stage(v1::RUN_COMPILING);
  printer.Print(p);
  p.set_workload_count(1);
  *p.mutable_trace() = MakeTrace("a", v1::PASSED, 1.0, 2.0, 0);
  printer.Print(p);
  p.clear_trace();
  p.set_stage(v1::RUN_DONE);
  printer.Print(p);
  printer.Finish();
  CHECK(err.str() ==
        "\r\033[K[run abc] compiling"
        "\r\033[K[run abc] workload 1/1 PASSED 1.000 ms (ref 2.000 ms, 2.00x)\n"
        "\r\033[K[run abc] done"
        "\r\033[K");
}
