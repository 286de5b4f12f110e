#include "server/evaluation/admission.h"
#include "server/evaluation/role_run.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/common/cuda_toolkit.h"
#include "harness/common/files.h"
#include "harness/compile/python_toolchain.h"
#include "harness/worker/worker_client.h"

namespace kiln {

namespace {

constexpr size_t kMaxLogBytes = 1 << 20;

int64_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

}  // namespace

// The last `max_bytes` of a worker's log from byte `from` on (a worker serving several
// workloads writes one log), read without loading the rest: a candidate may have flooded it
// with gigabytes.
std::string ReadLogTail(const std::string& path, size_t max_bytes, int64_t from) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const auto size = static_cast<size_t>(in.tellg());
  const size_t first = std::min(size, static_cast<size_t>(std::max<int64_t>(0, from)));
  const size_t start = size - first > max_bytes ? size - max_bytes : first;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (start == first) return text;
  return absl::StrCat("[... ", start - first, " bytes cut]\n", text);
}

namespace {

v1::RunState StageOf(const std::string& worker_stage) {
  if (worker_stage == "warmup" || worker_stage == "timing") return v1::RUN_TIMING;
  return v1::RUN_VERIFYING;  // inputs, verify, and anything a worker may add
}

std::string CanonicalDir(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

// The Python runner's arguments for `program` (after the interpreter).
std::vector<std::string> PythonRunnerArgs(const PythonReference& python,
                                          const RoleProgram& program) {
  std::vector<std::string> args = {"-B", python.runner, "--core", python.core};
  if (program.spare == "python") {
    args.push_back("--spare");
  } else if (program.python_solution != nullptr) {
    const v1::BuildSpec& spec = program.python_solution->spec();
    const bool dps = !spec.has_destination_passing_style() || spec.destination_passing_style();
    args.insert(args.end(), {"--solution", program.build->artifact_path, "--entry",
                             spec.entry_point(), "--style", dps ? "dps" : "value"});
  } else {
    args.insert(args.end(), {"--baseline", program.baseline});
    // A reference started ahead of need imports torch before its first request.
    if (program.spare == "reference") args.push_back("--warm");
  }
  for (const std::string& p : python.sys_path) {
    args.push_back("--sys-path");
    args.push_back(p);
  }
  return args;
}

// What one worker sees: its folder (writable), the worker's own binary and libraries, the
// compiled library (or the Python runner and the interpreter's path), the workload blobs, the
// CUDA toolkit, and its device's nodes.
std::shared_ptr<const SandboxPolicy> WorkerSandbox(const NodeContext& node, const WorkloadJob& job,
                                                   const RoleProgram& program,
                                                   const std::string& dir) {
  if (node.sandbox == nullptr || !node.sandbox->enabled()) return nullptr;
  const std::string worker_dir = node.worker_path.substr(0, node.worker_path.rfind('/'));
  const std::string bundle_lib =
      std::filesystem::path(worker_dir + "/../lib").lexically_normal().string();
  std::vector<std::string> readable = {worker_dir, bundle_lib, node.blob_root};
  if (program.build != nullptr) {
    const std::string& path = program.build->artifact_path;
    readable.push_back(path.substr(0, path.rfind('/')));
  }
  if (program.python() && node.python != nullptr) {
    const PythonReference& python = node.python->Get();
    readable.insert(readable.end(), python.readable_paths.begin(), python.readable_paths.end());
  }
  const bool gpu = job.backend->name != "host";
  if (gpu) {
    for (const std::string& root : CudaToolkitRoots()) readable.push_back(root);
  }
  // Only this slot's GPU: /dev/nvidia<minor> (the minor found from its PCI bus id), so the
  // worker cannot reach the GPUs other slots are timing on.
  return node.sandbox->WorkerPolicy(
      dir, std::move(readable), GpuDeviceNodes(job.backend->name, PlacementOf(job).device_minor),
      gpu, node.worker_memory_bytes);
}

}  // namespace

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 500) line = line.substr(0, 500) + "...";
  return line;
}

DevicePlacement PlacementOf(const WorkloadJob& job) {
  const auto& placements = job.backend->placements;
  const size_t slot = static_cast<size_t>(job.device_index);
  if (slot < placements.size()) return placements[slot];
  DevicePlacement fallback;
  fallback.index = job.device_index;
  fallback.device_minor = job.device_index;
  return fallback;
}

int64_t HostFlushOverride(const NodeContext& node, const WorkloadJob& job) {
  return job.backend->name == "host" ? node.host_flush_bytes : 0;
}

RoleProgram Compiled(const CompileOutput* library) {
  RoleProgram p;
  p.build = library;
  return p;
}
RoleProgram Python(const std::string& baseline) {
  RoleProgram p;
  p.baseline = baseline;
  p.label = baseline == "reference" ? "" : baseline;
  return p;
}
RoleProgram Built(const v1::Solution* solution, const CompileOutput* build,
                  const std::string& label) {
  const bool python = solution != nullptr && IsPythonLanguage(solution->spec().language());
  RoleProgram p;
  p.build = build;
  p.python_solution = python ? solution : nullptr;
  p.label = label;
  return p;
}
RoleProgram Candidate(const WorkloadJob& job) { return Built(job.solution, job.candidate); }
RoleProgram ReferenceProgram(const WorkloadJob& job) {
  return job.reference_source == kPythonReference ? Python("reference") : Compiled(job.reference);
}
RoleProgram WorkerOnly() { return RoleProgram{}; }

absl::StatusOr<RoleWorker> PrepareRoleWorker(const NodeContext& node, const WorkloadJob& job,
                                             const RoleProgram& program,
                                             const std::string& folder) {
  RoleWorker worker;
  if (absl::Status made = MakeDirs(folder); !made.ok()) return made;
  // Resolved now, before the worker runs, so the worker cannot move it.
  worker.dir = CanonicalDir(folder);
  WorkerLaunch& launch = worker.launch;
  if (!program.python()) {
    launch.worker_path = node.worker_path;
  } else {
    const PythonReference* python = node.python != nullptr ? &node.python->Get() : nullptr;
    // Solutions need torch; references on a GPU need torch with CUDA, on the host torch alone.
    const bool usable =
        python != nullptr &&
        (program.python_solution != nullptr || program.spare == "python" || program.backend == "host"
             ? python->torch
             : python->available);
    if (!usable) return absl::FailedPreconditionError("this node has no Python runner");
    launch.worker_path = python->python;
    launch.worker_args = PythonRunnerArgs(*python, program);
  }
  launch.job_dir = worker.dir;
  // Beside the worker's folder, not in it: the worker's own files are untrusted.
  launch.log_path = absl::StrCat(folder, ".log");
  launch.timeout_s = node.worker_timeout_s;
  launch.sandbox = WorkerSandbox(node, job, program, worker.dir);
  if (launch.sandbox != nullptr && !launch.sandbox->devices.empty()) {
    worker.device_zero = true;  // the one GPU whose nodes the sandbox has is its device 0
  }
  // A CUDA worker is also pinned by CUDA_VISIBLE_DEVICES=<its GPU's UUID>: its GPU is then its
  // device 0 whatever the harness's own CUDA_VISIBLE_DEVICES or device order. Unsandboxed this
  // is the only pinning, and no isolation: the process could still open other /dev/nvidiaN.
  const DevicePlacement placement = PlacementOf(job);
  if (program.backend == "cuda" && !placement.uuid.empty()) {
    launch.env_overrides.push_back(absl::StrCat("CUDA_VISIBLE_DEVICES=", placement.uuid));
    worker.device_zero = true;
  }
  return worker;
}

v1::WorkerRequest RoleRequest(v1::WorkerRequest request, const RoleWorker& worker,
                              const RoleProgram& program, const std::string& role, bool measure,
                              const std::string& output_dir) {
  request.set_role(role);
  request.set_measure(measure);
  request.set_output_dir(output_dir);
  if (!program.python() && program.build != nullptr) {
    request.set_artifact_path(program.build->artifact_path);
    request.set_symbol(program.build->symbol);
  }
  if (worker.device_zero) request.set_device_index(0);
  return request;
}

RoleRun CallRole(WorkerSession& session, const v1::WorkerRequest& request,
                 const std::string& dir, const std::string& log_path, bool last,
                 const StageFn& on_stage, const std::atomic<bool>* cancel,
                 const WorkerSession::GateFn& on_checked) {
  RoleRun run;
  run.dir = dir;
  const int64_t log_start = FileSize(log_path);
  on_stage(v1::RUN_VERIFYING);
  run.result = session.Call(
      request, [&](const v1::WorkerStatus& s) { on_stage(StageOf(s.stage())); }, cancel, last,
      on_checked);
  on_stage(v1::RUN_STATE_UNSPECIFIED);
  run.log = ReadLogTail(log_path, kMaxLogBytes, log_start);
  return run;
}

RoleRun RunRole(const NodeContext& node, const WorkloadJob& job, v1::WorkerRequest request,
                const RoleProgram& program, const std::string& role, bool measure,
                const StageFn& on_stage, const std::atomic<bool>* cancel,
                const LaunchAdjustment& adjust) {
  RoleRun run;
  const std::string folder = absl::StrCat(
      job.job_dir, "/", role == "reference" ? "ref" : role == "candidate" ? "cand" : role,
      program.label.empty() ? "" : "_" + program.label);
  RoleProgram what = program;
  what.backend = request.backend();
  auto worker = PrepareRoleWorker(node, job, what, folder);
  if (!worker.ok()) {
    run.started = worker.status();
    return run;
  }
  run.dir = worker->dir;
  run.started = MakeDirs(absl::StrCat(run.dir, "/out"));
  if (run.started.ok() && adjust) run.started = adjust(*worker);
  if (!run.started.ok()) return run;
  auto session = WorkerSession::Start(worker->launch);
  if (!session.ok()) {
    run.started = session.status();
    run.log = ReadLogTail(worker->launch.log_path, kMaxLogBytes, 0);
    return run;
  }
  RoleRun called = CallRole(**session,
                            RoleRequest(std::move(request), *worker, what, role, measure,
                                        absl::StrCat(run.dir, "/out")),
                            run.dir, worker->launch.log_path, /*last=*/true, on_stage, cancel);
  return called;
}

v1::WorkerRequest SolutionRequest(const v1::WorkerRequest& base) {
  v1::WorkerRequest request = base;
  request.mutable_definition()->clear_reference();
  request.mutable_definition()->clear_native_reference();
  return request;
}

}  // namespace kiln
