#include "server/evaluation/profile_run.h"

#include <limits.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "harness/common/files.h"
#include "harness/profile/profile_proto.h"
#include "harness/sandbox/process.h"
#include "harness/sandbox/sandbox_policy.h"
#include "harness/worker/worker_client.h"
#include "server/evaluation/admission.h"

namespace kiln {

namespace {

// A report larger than this is not archived (ncu's full set writes a few MB per kernel).
constexpr int64_t kMaxReportBytes = int64_t{256} << 20;
// `ncu --import` of one report; it reads a file and prints CSV.
constexpr double kImportTimeoutS = 120;
constexpr int64_t kMaxCsvBytes = int64_t{64} << 20;

std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

// What a sandboxed ncu must be able to read: the folder of the ncu named and of the file it
// resolves to, and the latter's parent (ncu's sections/ and target/ folders sit beside it). The
// CUDA toolkit's bin/ncu is a script that runs the newest <toolkit>/nsight-compute-*/ncu, often
// a link into /opt/nvidia/nsight-compute/: those, resolved, and /opt/nvidia, where it looks too.
std::vector<std::string> NcuDirs(const std::string& ncu) {
  std::vector<std::string> dirs;
  auto add = [&](const std::filesystem::path& p) {
    const std::string s = p.lexically_normal().string();
    if (!s.empty() && s != "/") dirs.push_back(s);
  };
  const std::filesystem::path named(ncu);
  const std::filesystem::path real(RealPath(ncu));
  add(named.parent_path());
  add(real.parent_path());
  const std::filesystem::path root = real.parent_path().parent_path();
  add(root);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("nsight-compute", 0) == 0) add(RealPath(entry.path().string()));
  }
  if (std::filesystem::is_directory("/opt/nvidia", ec)) add("/opt/nvidia");
  return dirs;
}

int64_t SizeOf(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? -1 : static_cast<int64_t>(size);
}

std::string ReportPath(const std::string& dir) { return absl::StrCat(dir, "/report.ncu-rep"); }

}  // namespace

std::vector<std::string> NcuCollectionArgs(const std::string& section) {
  if (section == "full") return {"--set", "full"};
  std::vector<std::string> args = {"--set", "basic"};
  if (section == "memory") {
    // Cache hit rates and DRAM bytes (docs/profiles.md), and the sections an engineer opens the
    // report for.
    for (const char* s : {"MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Tables"}) {
      args.insert(args.end(), {"--section", s});
    }
    args.insert(args.end(), {"--metrics",
                             "l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,"
                             "dram__bytes_read.sum,dram__bytes_write.sum"});
  } else if (section == "compute") {
    // Warp stalls, FLOP/s and the roofline's peaks.
    for (const char* s : {"ComputeWorkloadAnalysis", "WarpStateStats", "InstructionStats",
                          "SpeedOfLight_RooflineChart"}) {
      args.insert(args.end(), {"--section", s});
    }
    args.insert(args.end(), {"--metrics", "dram__bytes_read.sum,dram__bytes_write.sum"});
  }
  return args;
}

ProfileOutcome ProfileTarget(const NodeContext& node, const WorkloadJob& job,
                             const RoleProgram& program, const std::string& target,
                             const std::string& section, const std::atomic<bool>* cancel) {
  ProfileOutcome out;
  out.target.set_target(target);
  const auto started = std::chrono::steady_clock::now();
  auto finish = [&](std::string error) {
    out.target.set_error(std::move(error));
    out.target.set_seconds(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    return out;
  };
  const std::string& ncu = node.profiling.ncu;
  if (!node.profiling.available || ncu.empty()) {
    return finish(absl::StrCat("this node cannot profile: ", node.profiling.reason));
  }
  // One trial: its checked call (compared with the reference's outputs again by nobody: the
  // run's evaluation already judged this workload), a warm-up call and the profiled call.
  v1::TimingConfig config;
  config.set_mode("official");
  v1::WorkerRequest request = WorkloadBaseRequest(node, job, config, /*trials=*/1);
  const bool solution = target == "solution" || target.rfind("solution:", 0) == 0;
  if (solution) request = SolutionRequest(request);
  request.set_profile_call(true);
  const std::string role = target == "solution"    ? "candidate"
                           : target == "reference" ? "reference"
                                                   : "baseline";
  std::string report_path;
  LaunchAdjustment under_ncu = [&](RoleWorker& worker) -> absl::Status {
    WorkerLaunch& launch = worker.launch;
    report_path = ReportPath(worker.dir);
    std::vector<std::string> args = {"--profile-from-start", "off", "--clock-control", "none",
                                     "--target-processes",  "all", "--launch-count",
                                     absl::StrCat(kMaxProfiledKernels), "--export", report_path,
                                     "--force-overwrite"};
    for (std::string& a : NcuCollectionArgs(section)) args.push_back(std::move(a));
    args.push_back("--");
    args.push_back(launch.worker_path);
    args.insert(args.end(), launch.worker_args.begin(), launch.worker_args.end());
    launch.worker_path = ncu;
    launch.worker_args = std::move(args);
    // The worker leaves CUPTI to the profiler (no timer: nothing is timed).
    launch.env_overrides.push_back("KILN_WORKER_UNDER_PROFILER=1");
    if (launch.sandbox != nullptr && node.sandbox != nullptr) {
      launch.sandbox = node.sandbox->ProfilerPolicy(*launch.sandbox, NcuDirs(ncu));
    }
    return absl::OkStatus();
  };
  RoleRun run = RunRole(
      node, job, std::move(request), program, role, /*measure=*/false,
      [](v1::RunState) {}, cancel, under_ncu);
  out.log = run.log;
  if (!run.started.ok()) {
    return finish(absl::StrCat("the profiled worker did not start: ", run.started.message()));
  }
  if (run.result.status() != v1::PASSED) {
    const std::string error = run.result.error().empty()
                                  ? std::string(v1::EvaluationStatus_Name(run.result.status()))
                                  : FirstLine(run.result.error());
    return finish(absl::StrCat("the profiled worker failed under ncu: ", error));
  }
  if (report_path.empty() || SizeOf(report_path) <= 0) {
    return finish("ncu wrote no report (no kernel ran between cudaProfilerStart and "
                  "cudaProfilerStop, or ncu failed: see the worker log)");
  }
  if (SizeOf(report_path) > kMaxReportBytes) {
    return finish(absl::StrCat("ncu's report is larger than ", kMaxReportBytes >> 20, " MiB"));
  }
  absl::StatusOr<std::string> report = ReadFile(report_path);
  if (!report.ok()) return finish(absl::StrCat("reading ncu's report: ", report.status().message()));
  out.report = *std::move(report);
  // Read back in a sandbox of its own: the candidate could have written the report.
  ProcessOptions import;
  import.argv = {ncu,   "--import", report_path, "--csv", "--page", "raw", "--print-units",
                 "base"};
  import.cwd = run.dir;
  import.env = SandboxEnvironment(ParentEnvironment(), run.dir);
  import.merge_stderr = false;
  import.timeout_s = kImportTimeoutS;
  import.max_captured_bytes = kMaxCsvBytes;
  if (node.sandbox != nullptr) {
    std::shared_ptr<const SandboxPolicy> base =
        node.sandbox->Policy(run.dir, {}, {}, /*gpu=*/false, node.worker_memory_bytes);
    if (base != nullptr) import.sandbox = node.sandbox->ProfilerPolicy(*base, NcuDirs(ncu));
  }
  absl::StatusOr<ProcessResult> csv = RunProcess(import, cancel);
  if (!csv.ok()) return finish(absl::StrCat("ncu --import: ", csv.status().message()));
  if (csv->timed_out || csv->term_signal != 0 || csv->exit_code != 0) {
    return finish(absl::StrCat("ncu --import: ", csv->Describe(), ": ",
                               FirstLine(csv->output)));
  }
  absl::StatusOr<std::vector<KernelProfile>> kernels = ParseNcuRawCsv(csv->output);
  if (!kernels.ok()) return finish(absl::StrCat("ncu's report: ", kernels.status().message()));
  if (kernels->empty()) return finish("ncu profiled no kernel of the call");
  for (const KernelProfile& k : *kernels) *out.target.add_kernels() = KernelProfileToProto(k);
  return finish("");
}

}  // namespace kiln
