#include "server/evaluation/workload_evaluation.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "harness/common/cuda_toolkit.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "harness/compile/python_toolchain.h"
#include "harness/model/json_interop.h"
#include "harness/timing/protocol.h"
#include "harness/verify/comparator.h"
#include "harness/verify/input_generator.h"
#include "harness/verify/integrity_policy.h"
#include "harness/verify/own_kernels.h"
#include "harness/verify/own_work.h"
#include "harness/worker/worker_client.h"
#include "server/evaluation/admission.h"
#include "server/evaluation/baseline_program.h"
#include "server/evaluation/batch_references.h"
#include "server/evaluation/folder_reaper.h"
#include "server/evaluation/output_comparison.h"
#include "server/evaluation/role_run.h"
#include "server/evaluation/spare_workers.h"
#include "server/evaluation/speed_of_light.h"
#include "server/evaluation/warm_workers.h"
#include "server/evaluation/workload_verdict.h"
#include "server/thread_nice.h"

namespace kiln {

v1::WorkerRequest WorkloadBaseRequest(const NodeContext& node, const WorkloadJob& job,
                                      const v1::TimingConfig& config, int trials) {
  v1::WorkerRequest request;
  *request.mutable_definition() = *job.definition;
  *request.mutable_workload() = *job.workload;
  for (int t = 0; t < trials; ++t) {
    // A batch's runs share their inputs: the batch's id in place of the run's.
    request.add_trial_seeds(MixSeed(node.server_secret,
                                    job.batch_id.empty() ? job.run_id : job.batch_id, job.index,
                                    t));
  }
  *request.mutable_timing() = config;
  if (const int64_t flush = HostFlushOverride(node, job); flush > 0) {
    request.mutable_timing()->set_flush_bytes(flush);
  }
  request.set_backend(job.backend->name);
  // The device's index as the harness's runtime numbers it; RunRole renumbers it for a worker
  // that sees only its own GPU.
  request.set_device_index(PlacementOf(job).index);
  request.set_blob_root(node.blob_root);
  return request;
}

int TrialsFor(const std::string& mode, const v1::TimingConfig& config) {
  return std::max(1, config.trials());
}

namespace {

// One workload of the run on its way through the phases.
struct WorkloadState {
  const WorkloadJob* job = nullptr;
  WorkloadResult out;
  v1::WorkerRequest base;
  int trials = 0;
  RoleRun ref;
  v1::TimingResult ref_timing;
  bool ref_cached = false;
  // The reference's outputs, removed once the workload is done (or, a warm worker's outside a
  // batch, kept for its next run: KeepReferenceFiles).
  std::string ref_folder;
  // The reference's latency in the node's timing cache, looked up before the references run.
  std::string ref_cache_key;
  std::optional<v1::TimingResult> cached_ref_timing;
  bool decided = false;    // `out` is final (failed before the candidate's result)
  // The candidate's outputs against the reference's, pass by pass (each trial's checked outputs,
  // then its recheck's) as the worker reports them at its gates.
  std::unique_ptr<OutputComparison> comparison;
  int rechecks_judged = 0;  // the candidate's rechecks compared at the gates
};

// The candidate's output files of a pass that was judged correct at its gate are given back to
// the worker for its next pass to be written over (renamed to WorkerReuseFile before it goes
// on), or else removed while it goes on, one pass at a time: a pass waits until the previous
// pass's files are gone, so that the candidate's folder holds at most two passes' outputs
// (Evaluation::OutputFileBytes counts on it; written over, one). A KernelBench problem with a 6 GiB output writes 12 GiB a trial; in official
// mode (3 trials) the candidate's 36 GiB with the reference's 36 GiB did not fit in half of an
// H200 node's memory. The reference's files stay until the workload is done: they are what
// later trials (an earlier trial's answer replayed) and a batch's other runs are compared with.
class JudgedFiles {
 public:
  // Files under `root`/w<workload>/out (the candidate's folder, which its worker can write:
  // no link there is followed).
  JudgedFiles(std::string root, int workload) : root_(std::move(root)), workload_(workload) {}
  ~JudgedFiles() { Wait(); }
  JudgedFiles(const JudgedFiles&) = delete;
  JudgedFiles& operator=(const JudgedFiles&) = delete;

  // Done with the files of a pass judged correct: each is renamed to the output's reuse name
  // (WorkerReuseFile), which the worker writes its next pass of that output over in place (no
  // new pages), before the worker hears the verdict. Any not renamed so is removed on a thread
  // of the harness while the worker goes on; the next pass waits for that.
  void Done(const v1::Definition& def, int trial, bool recheck) {
    std::vector<std::pair<std::string, std::string>> renames;
    for (const v1::TensorSpec& spec : def.outputs()) {
      renames.emplace_back(WorkerOutputFile(trial, spec.name(), recheck),
                           WorkerReuseFile(spec.name()));
    }
    Wait();
    std::vector<std::string> left = RenameBeneath(root_, Folders(), renames);
    if (left.empty()) return;
    pending_ = std::async(std::launch::async,
                          [root = root_, folders = Folders(), names = std::move(left)] {
                            // Housekeeping: the worker's own threads come first.
                            (void)NiceThisThread(10);
                            UnlinkBeneath(root, folders, names);
                          });
  }
  void Wait() {
    if (pending_.valid()) pending_.get();
  }

 private:
  std::vector<std::string> Folders() const { return {absl::StrCat("w", workload_), "out"}; }

  const std::string root_;
  const int workload_;
  std::future<void> pending_;
};

// The most bytes of output files a warm reference worker's folder keeps from its last run for
// the next one to write over (KeepReferenceFiles): an RMSNorm at batch 14418 writes 6 passes
// of 118 MiB. Above it the files are removed as before; a KernelBench problem with a 6 GiB output
// writes 36 GiB in official mode, which would take the RAM-backed folder's room from runs.
constexpr int64_t kMaxKeptReferenceBytes = int64_t{2} << 30;

// The bytes of the plain files in `folder` (no link followed; -1 when it cannot be read), and
// of those kept in a warm worker's folder `dir` (its kept_w*/out/ files).
int64_t FolderFileBytes(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int64_t bytes = 0;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;
    if (fs::is_regular_file(it->symlink_status(file_ec))) {
      const uintmax_t size = it->file_size(file_ec);
      if (!file_ec) bytes += static_cast<int64_t>(size);
    }
  }
  return ec ? -1 : bytes;
}

int64_t KeptBytes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int64_t bytes = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("kept_w", 0) != 0) continue;
    bytes += std::max<int64_t>(0, FolderFileBytes((it->path() / "out").string()));
  }
  return bytes;
}

// Where a warm worker whose folder is `worker_dir` keeps its files of workload `index` between
// runs.
std::string KeptFolder(const std::string& worker_dir, int index) {
  return absl::StrCat(worker_dir, "/kept_w", index);
}

// A warm reference worker's files of workload `index`, which it computed correctly in `folder`
// (a folder of the worker's own folder; every pass it reported: t<trial>_<name>.bin and
// r<trial>_<name>.bin under `folder`/out), kept for its next run on the same workload index to
// write each pass over in place (WorkerKeptFile): on a tmpfs a new file's pages are made and
// zeroed as it is written, and given back when it is removed. Each is renamed to its kept name
// (so no earlier run's file is ever under a pass's own name), then the folder to KeptFolder.
// False when they are not kept (the caller removes the folder): over kMaxKeptReferenceBytes
// with what the worker keeps already, a pass not where the worker said, or a rename that
// failed.
bool KeepReferenceFiles(const RoleRun& ref, const std::string& folder, int index) {
  if (!ref.started.ok() || ref.result.status() != v1::PASSED) return false;
  const size_t slash = folder.rfind('/');
  if (slash == std::string::npos) return false;
  const std::string worker_dir = folder.substr(0, slash);
  const std::string out = absl::StrCat(folder, "/out");
  std::vector<std::pair<std::string, std::string>> renames;
  auto add = [&](const v1::TrialOutputs& pass, bool recheck) {
    for (const v1::OutputTensor& o : pass.outputs()) {
      const std::string name = WorkerOutputFile(pass.trial(), o.name(), recheck);
      if (o.path() != absl::StrCat(out, "/", name)) return false;
      renames.emplace_back(name, WorkerKeptFile(pass.trial(), o.name(), recheck));
    }
    return true;
  };
  for (const v1::TrialOutputs& pass : ref.result.trials()) {
    if (!add(pass, false)) return false;
  }
  for (const v1::TrialOutputs& pass : ref.result.rechecks()) {
    if (!add(pass, true)) return false;
  }
  // Every file the folder would keep: these passes and any kept file of an earlier run that
  // this one did not write over (a run of fewer trials).
  const int64_t bytes = FolderFileBytes(out);
  if (bytes < 0 || renames.empty() ||
      bytes + KeptBytes(worker_dir) > kMaxKeptReferenceBytes) {
    return false;
  }
  if (!RenameBeneath(worker_dir, {folder.substr(slash + 1), "out"}, renames).empty()) {
    return false;
  }
  return ::rename(folder.c_str(), KeptFolder(worker_dir, index).c_str()) == 0;
}

std::string SlotOf(const WorkloadJob& job) {
  return absl::StrCat(job.backend->name, "#", job.device_index);
}

// Whether the node keeps spares for the job's backend: GPU backends only, where a spare warms up
// on the CPU while another run may be timed on the GPU; on the host backend that CPU time is the
// very time being measured (tests may ask for them there: NodeContext.spares_on_host).
bool KeepsSpares(const NodeContext& node, const WorkloadJob& job) {
  return node.spares != nullptr && (job.backend->name == "cuda" || node.spares_on_host);
}

// The key a slot's spare reference runner is kept under, beside the slot's candidate spare.
std::string ReferenceSpareSlot(const WorkloadJob& job) {
  return absl::StrCat(SlotOf(job), "|reference");
}

// Warm reference workers' folders, under jobs/warm, numbered as they are started.
std::string NextWarmFolder(const NodeContext& node, const WorkloadJob& job) {
  static std::atomic<int64_t> started{0};
  return absl::StrCat(node.jobs_dir, "/warm/", job.backend->name, job.device_index, "_",
                      started.fetch_add(1));
}

// Starts `program` (its spare kind and backend set) in `folder` on the job's slot and keeps it
// under `key`; nothing when it cannot start (the next taker starts its own).
void KeepSpare(const NodeContext& node, const WorkloadJob& job, const RoleProgram& program,
               const std::string& folder, const std::string& key) {
  auto prepared = PrepareRoleWorker(node, job, program, folder);
  if (!prepared.ok()) return;
  auto session = WorkerSession::Start(prepared->launch);
  if (!session.ok()) {
    (void)RemoveTree(prepared->dir);
    return;
  }
  auto kept = std::make_unique<SpareWorkers::Spare>();
  kept->worker = *std::move(prepared);
  kept->session = *std::move(session);
  node.spares->Put(key, std::move(kept));
}

// A Python reference runner for the job's slot started ahead of need, when there is none: the
// interpreter started and torch imported on the CPU (no GPU work before its first request), so
// that the next Python reference no warm worker serves yet (a definition new to this node, or
// one evicted from the warm pool: every problem of a KernelBench suite) skips that start. It
// runs only operator-registered code, as every reference worker, and serves whichever
// definition's reference takes it, from then on as that reference's warm worker. Its launch is
// a reference worker's of the slot: the same program, sandbox and device.
void StartReferenceSpare(const NodeContext& node, const WorkloadJob& job) {
  if (!KeepsSpares(node, job) || job.reference_source != kPythonReference ||
      node.spares->Has(ReferenceSpareSlot(job))) {
    return;
  }
  RoleProgram program = Python("reference");
  program.spare = "reference";
  program.backend = job.backend->name;
  KeepSpare(node, job, program, NextWarmFolder(node, job), ReferenceSpareSlot(job));
}

// What a warm reference worker serves: the program and its definition (any change of either is
// a new worker), on the backend its requests name.
std::string WarmKey(const NodeContext& node, const WorkloadJob& job, const std::string& backend) {
  if (job.reference_source == kPythonReference) {
    return absl::StrCat("python|reference|", backend, "|torch ",
                        node.python != nullptr ? node.python->Get().torch_version : "", "|",
                        Sha256Hex(job.definition->SerializeAsString()));
  }
  return absl::StrCat("native|", job.reference->cache_key, "|", backend, "|",
                      Sha256Hex(job.definition->SerializeAsString()));
}

// The reference of one workload: by the slot's warm worker for it (started now if there is
// none), or, without warm workers, by a worker of its own in the workload's folder.
//
// `kept`: a warm worker's files of this workload index from its last run (KeepReferenceFiles)
// are moved into the workload's folder first, for each pass to be written over in place (false:
// a batch's shared reference, which is not kept).
RoleRun RunReference(const NodeContext& node, const WorkloadJob& job,
                     const v1::WorkerRequest& request, bool measure, const StageFn& on_stage,
                     const std::atomic<bool>* cancel, std::string* folder, bool kept) {
  RoleProgram program = ReferenceProgram(job);
  if (node.warm == nullptr) {
    *folder = "";
    return RunRole(node, job, request, program, "reference", measure, on_stage, cancel);
  }
  program.backend = request.backend();
  const std::string slot = SlotOf(job);
  const std::string key = WarmKey(node, job, request.backend());
  RoleRun run;
  // A warm worker that has served before and fails now may have died idle: the request is
  // tried once more in a fresh one, which tells a real failure of the reference from that. The
  // same holds for a spare (started ahead of need, it has served nothing yet).
  for (int attempt = 0; attempt < 2; ++attempt) {
    WarmWorkers::Lease lease = node.warm->Take(slot, key);
    RoleWorker worker;
    bool from_spare = false;
    if (lease.session == nullptr) {
      std::unique_ptr<SpareWorkers::Spare> spare;
      if (attempt == 0 && job.reference_source == kPythonReference && KeepsSpares(node, job)) {
        spare = node.spares->Take(ReferenceSpareSlot(job));
      }
      if (spare != nullptr) {
        worker = std::move(spare->worker);
        lease.session = std::move(spare->session);
        from_spare = true;
      } else {
        auto prepared = PrepareRoleWorker(node, job, program, NextWarmFolder(node, job));
        if (!prepared.ok()) {
          run = RoleRun{};
          run.started = prepared.status();
          return run;
        }
        auto session = WorkerSession::Start(prepared->launch);
        if (!session.ok()) {
          run = RoleRun{};
          run.started = session.status();
          return run;
        }
        worker = *std::move(prepared);
        lease.session = *std::move(session);
      }
      lease.dir = worker.dir;
      lease.log_path = worker.launch.log_path;
      lease.device_zero = worker.device_zero;
      node.metrics->WarmWorkerStarted(from_spare);
      // The next Python reference new to this slot finds its interpreter started.
      StartReferenceSpare(node, job);
    }
    worker.dir = lease.dir;
    worker.device_zero = lease.device_zero;
    *folder = absl::StrCat(lease.dir, "/", job.batch_id.empty() ? job.run_id : job.batch_id,
                           "_w", job.index);
    // A folder of the harness's own making (the reference writes only below out/).
    struct stat info;
    if (const std::string keep = KeptFolder(lease.dir, job.index);
        kept && ::lstat(keep.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      (void)::rename(keep.c_str(), folder->c_str());
    }
    run = RoleRun{};
    run.started = MakeDirs(absl::StrCat(*folder, "/out"));
    if (!run.started.ok()) return run;
    const bool warm = lease.served > 0 || from_spare;
    run = CallRole(*lease.session,
                   RoleRequest(request, worker, program, "reference", measure,
                               absl::StrCat(*folder, "/out")),
                   *folder, lease.log_path, /*last=*/false, on_stage, cancel);
    ++lease.served;
    const bool ok = run.result.status() == v1::PASSED;
    node.warm->Give(slot, std::move(lease));
    if (ok || !warm || (cancel != nullptr && cancel->load())) break;
    (void)RemoveTree(*folder);
  }
  return run;
}

// The reference of workload `w`; false when the workload is decided by it.
bool ReferencePhase(const NodeContext& node, const StageFn& on_stage,
                    const std::atomic<bool>* cancel, WorkloadState& w) {
  const WorkloadJob& job = *w.job;
  WorkloadResult& out = w.out;
  out.detail.set_workload_index(job.index);
  // What the workload is judged with: the definition's tolerances and official-mode counts
  // (kiln defs set included); the counts are recorded in the TimingResults.
  *out.detail.mutable_tolerance() = ToleranceProto(*job.definition);
  auto config = TimingConfigFor(job.mode, *job.definition);
  if (!config.ok()) {
    SetFailure(out, v1::RUNTIME_ERROR, std::string(config.status().message()), "");
    return false;
  }
  w.trials = TrialsFor(job.mode, *config);
  w.base = WorkloadBaseRequest(node, job, *config, w.trials);
  const bool python = job.reference_source == kPythonReference;
  const std::optional<v1::TimingResult>& cached = w.cached_ref_timing;

  v1::WorkerRequest ref_request = w.base;
  if (!python) {
    ref_request.set_backend(ReferenceBackendName(
        job.definition->native_reference().spec().language(), job.backend->name));
    if (ref_request.backend() != w.base.backend()) ref_request.set_device_index(0);
  }
  if (job.batch != nullptr) {
    // The batch's runs compute each workload's reference once.
    std::lock_guard<std::mutex> lock(job.batch->mu());
    if (std::optional<RoleRun> shared = job.batch->Find(job.index); shared.has_value()) {
      w.ref = *std::move(shared);
    } else {
      // Outside the run's folder: the batch's other runs read it after this run is done.
      WorkloadJob shared_job = job;
      shared_job.job_dir = absl::StrCat(node.jobs_dir, "/", job.batch_id, "_w", job.index);
      w.ref = RunReference(node, shared_job, ref_request, !cached.has_value(), on_stage, cancel,
                           &w.ref_folder, /*kept=*/false);
      if (w.ref.started.ok() && w.ref.result.status() == v1::PASSED) {
        job.batch->Keep(job.index, w.ref,
                        w.ref_folder.empty() ? shared_job.job_dir : w.ref_folder);
        w.ref_folder.clear();  // the batch's now
      }
    }
  } else {
    w.ref = RunReference(node, job, ref_request, !cached.has_value(), on_stage, cancel,
                         &w.ref_folder, node.keep_reference_files);
  }
  out.detail.set_reference_source(job.reference_source);
  if (!AcceptReference(w.ref, cancel, out)) return false;
  w.ref_cached = cached.has_value();
  w.ref_timing = cached ? *cached : w.ref.result.timing();
  if (!cached) node.reference_timings->Store(w.ref_cache_key, w.ref_timing);
  *out.detail.mutable_reference_timing() = w.ref_timing;
  return true;
}

// The candidate's outputs of workload `w` judged: the checked outputs were compared at the
// worker's gates (all of them, or up to the trial found incorrect, where the worker stopped);
// now the rechecks, then the speed-of-light floor.
void Judge(const RoleRun& cand, double peak_gbps, WorkloadState& w) {
  const WorkloadJob& job = *w.job;
  WorkloadResult& out = w.out;
  out.worker_log = cand.log;
  if (!AcceptCandidate(cand, out)) return;
  *out.detail.mutable_timing() = cand.result.timing();
  OutputComparison& comparison = *w.comparison;
  const WorkerOutputs candidate{&cand.result, cand.dir};
  if (comparison.verdict().status == v1::PASSED) {
    // The claims held (trials as reported at the gates): a trial short of the workload's is
    // "not written".
    for (int t = cand.result.trials_size(); t < w.trials; ++t) {
      if (!comparison.Compare(t, /*recheck=*/false, candidate)) break;
    }
    // The rechecks not judged at the gates: "not written". Workers of this build always
    // recheck; results without rechecks come from tests.
    for (int t = w.rechecks_judged; t < w.trials && !w.ref.result.rechecks().empty(); ++t) {
      if (!comparison.Compare(t, /*recheck=*/true, candidate)) break;
    }
  }
  OutputVerdict verdict = comparison.Finish();
  ApplyVerdict(verdict, cand.result.timing(), w.ref_timing, out);
  for (const std::string& warning : verdict.warnings) out.detail.add_warnings(warning);
  ApplyFloor(job, peak_gbps, out);
  ApplyOwnKernelCheck(job, out);
}

// The candidate's worker for the run: one process serving every workload from `from` on.
struct CandidateWorker {
  RoleWorker worker;
  std::unique_ptr<WorkerSession> session;
  absl::Status started;
  // A spare's folder lies outside the run's folder: removed when the run is done.
  std::string spare_dir;
  // Where a spare was given the solution: its package and entry come with every request.
  std::string package;
};

constexpr int64_t kMaxTritonCacheBytes = int64_t{256} << 20;

// A Triton solution's JIT cache, kept per build: only runs of the very same sources (same build
// key) ever read it. Copied into the candidate's folder before it starts, and the files a run
// that passed every workload added are copied back (never over a file already kept).
std::string TritonCacheOf(const CompileOutput& build) {
  const std::string& pkg = build.artifact_path;
  return absl::StrCat(pkg.substr(0, pkg.rfind('/')), "/triton_cache");
}

// A new spare for `slot`, when the node keeps them and the candidate is Python.
void StartSpare(const NodeContext& node, const WorkloadJob& job) {
  if (!KeepsSpares(node, job)) return;
  static std::atomic<int64_t> started{0};
  RoleProgram spare;
  spare.spare = "python";
  spare.backend = job.backend->name;
  KeepSpare(node, job, spare,
            absl::StrCat(node.jobs_dir, "/spare/", job.backend->name, job.device_index, "_",
                         started.fetch_add(1)),
            SlotOf(job));
}

CandidateWorker StartCandidate(const NodeContext& node, const WorkloadJob& job,
                               const RoleProgram& program, const std::string& folder,
                               const std::vector<WorkloadState*>& workloads, bool may_use_spare) {
  CandidateWorker c;
  const bool python = program.python_solution != nullptr;
  std::unique_ptr<SpareWorkers::Spare> spare;
  if (python && may_use_spare && node.spares != nullptr) spare = node.spares->Take(SlotOf(job));
  if (spare != nullptr) {
    c.worker = std::move(spare->worker);
    c.session = std::move(spare->session);
    c.spare_dir = c.worker.dir;
    // The spare was started with no access to any solution: its package is copied in.
    c.package = absl::StrCat(c.worker.dir, "/pkg");
    auto copied = CopyPlainTree(program.build->artifact_path, c.package, /*overwrite=*/true,
                                int64_t{1} << 30);
    if (!copied.ok()) c.started = copied.status();
  } else {
    auto prepared = PrepareRoleWorker(node, job, program, folder);
    if (!prepared.ok()) {
      c.started = prepared.status();
      return c;
    }
    c.worker = *std::move(prepared);
  }
  if (python) {
    (void)CopyPlainTree(TritonCacheOf(*program.build),
                        absl::StrCat(c.worker.dir, "/triton_cache"), /*overwrite=*/false,
                        kMaxTritonCacheBytes);
    // The next Python candidate on this slot finds its interpreter started.
    if (may_use_spare) StartSpare(node, job);
  }
  // Every output folder exists before the worker has its solution: the harness makes nothing in
  // the candidate's folder while the candidate runs.
  for (const WorkloadState* w : workloads) {
    c.started.Update(MakeDirs(absl::StrCat(c.worker.dir, "/w", w->job->index, "/out")));
  }
  if (!c.started.ok() || c.session != nullptr) return c;
  if (!python && program.backend != "host") {
    // Its device opened before the first request (harness/worker/main.cc).
    const int index = c.worker.device_zero ? 0 : PlacementOf(job).index;
    c.worker.launch.env_overrides.push_back(
        absl::StrCat("KILN_WORKER_DEVICE=", program.backend, ":", index));
  }
  auto session = WorkerSession::Start(c.worker.launch);
  if (!session.ok()) {
    c.started = session.status();
    return c;
  }
  c.session = *std::move(session);
  return c;
}

}  // namespace

void EvaluateWorkloads(const NodeContext& node, const std::vector<WorkloadJob>& jobs,
                       const std::string& run_dir, const StageFn& on_stage,
                       const WorkloadStarted& on_workload, const std::atomic<bool>* cancel,
                       const WorkloadDone& done) {
  auto cancelled = [cancel] { return cancel != nullptr && cancel->load(); };
  std::vector<WorkloadState> states(jobs.size());
  std::vector<WorkloadState*> ready;
  auto finish = [&](WorkloadState& w) {
    if (!w.ref_folder.empty() &&
        (w.job->batch != nullptr || !node.keep_reference_files ||
         !KeepReferenceFiles(w.ref, w.ref_folder, w.job->index))) {
      DiscardFolder(node.reaper, w.ref_folder);
    }
    done(w.job->index, std::move(w.out));
  };
  if (jobs.empty()) return;
  // Whether every workload's reference latency is cached: the references then only compute
  // outputs, and nothing of this run is timed before the candidate.
  bool references_cached = true;
  for (size_t i = 0; i < jobs.size(); ++i) {
    WorkloadState& w = states[i];
    w.job = &jobs[i];
    w.ref_cache_key = TimingCacheKey(node, jobs[i], "reference");
    w.cached_ref_timing = node.reference_timings->Find(w.ref_cache_key);
    references_cached &= w.cached_ref_timing.has_value();
  }
  RoleProgram program = Candidate(jobs.front());
  program.backend = jobs.front().backend->name;
  const std::string first_folder = absl::StrCat(run_dir, "/cand");
  // The candidate's process starts (and opens its device) while the references run when none
  // of them is timed: their latencies are all cached, so they only compute outputs. Starting a
  // process and creating a context is CPU and driver work that would disturb a reference being
  // timed; and nothing of the candidate runs before its first request (the worker loads the
  // solution then), so no candidate code runs beside a reference either way.
  std::future<CandidateWorker> early;
  if (references_cached && !cancelled()) {
    std::vector<WorkloadState*> all;
    for (WorkloadState& w : states) all.push_back(&w);
    early = std::async(std::launch::async, [&node, &jobs, program, first_folder, all] {
      return StartCandidate(node, jobs.front(), program, first_folder, all,
                            /*may_use_spare=*/true);
    });
  }
  // A candidate started early and not used: its process ends, its spare folder goes.
  auto drop_early = [&early, &node] {
    if (!early.valid()) return;
    CandidateWorker unused = early.get();
    unused.session.reset();
    if (!unused.spare_dir.empty()) DiscardFolder(node.reaper, unused.spare_dir);
  };
  // 1. Every reference first: nothing of the candidate runs while a reference is timed.
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (cancelled()) break;
    on_workload(jobs[i].index, kRoleReference);
    const auto t0 = absl::Now();
    const bool ok = ReferencePhase(node, on_stage, cancel, states[i]);
    node.metrics->VerdictStage("reference", absl::ToDoubleSeconds(absl::Now() - t0));
    if (ok) {
      ready.push_back(&states[i]);
    } else {
      finish(states[i]);
    }
  }
  if (ready.empty() || cancelled()) {
    drop_early();
    for (WorkloadState* w : ready) {
      SetFailure(w->out, v1::CANCELLED, "cancelled", "");
      finish(*w);
    }
    return;
  }
  const double peak_gbps =
      PeakBandwidth(node, *ready.front()->job, ready.front()->base, on_stage, cancel);

  // 2. The candidate: one fresh process for all its workloads (a new one only after a failure
  // ended the last), each workload judged as soon as its result is in.
  const WorkloadJob& first = *ready.front()->job;
  const bool baselines = first.baselines != nullptr && !first.baselines->empty();
  CandidateWorker cand;
  int processes = 0;
  if (early.valid()) {
    cand = early.get();
    processes = 1;
  }
  bool all_passed = true;
  for (size_t k = 0; k < ready.size(); ++k) {
    WorkloadState& w = *ready[k];
    if (cancelled()) {
      SetFailure(w.out, v1::CANCELLED, "cancelled", "");
      finish(w);
      continue;
    }
    on_workload(w.job->index, kRoleCandidate);
    const auto t0 = absl::Now();
    if (cand.session == nullptr || !cand.session->open()) {
      cand.session.reset();
      std::vector<WorkloadState*> rest(ready.begin() + static_cast<long>(k), ready.end());
      if (!cand.spare_dir.empty()) DiscardFolder(node.reaper, cand.spare_dir);
      cand = StartCandidate(node, *w.job, program,
                            processes == 0 ? first_folder
                                           : absl::StrCat(first_folder, "_", processes),
                            rest, /*may_use_spare=*/processes == 0);
      ++processes;
    }
    RoleRun run;
    w.comparison = std::make_unique<OutputComparison>(
        *w.job->definition, *w.job->workload, WorkerOutputs{&w.ref.result, w.ref.dir});
    if (!cand.started.ok()) {
      run.started = cand.started;
    } else {
      const std::string out_dir = absl::StrCat(cand.worker.dir, "/w", w.job->index, "/out");
      v1::WorkerRequest request = RoleRequest(SolutionRequest(w.base), cand.worker, program,
                                              "candidate", /*measure=*/true, out_dir);
      // Each trial's checked outputs are judged as soon as they are written, before the trial
      // is timed: an incorrect workload is not timed (as flashinfer-bench's evaluator).
      request.set_gate_trials(true);
      if (!cand.package.empty()) {
        const v1::BuildSpec& spec = w.job->solution->spec();
        request.set_artifact_path(cand.package);
        request.set_symbol(spec.entry_point());
        request.set_value_returning(spec.has_destination_passing_style() &&
                                    !spec.destination_passing_style());
      }
      v1::WorkerResult reported;  // the passes' outputs as the worker reported them
      const std::string dir = cand.worker.dir;
      JudgedFiles judged_files(dir, w.job->index);
      auto on_checked = [&w, &reported, &dir, &judged_files](const v1::TrialOutputs& outputs,
                                                              bool recheck) {
        if (recheck) {
          *reported.add_rechecks() = outputs;
          // Results without rechecks come from tests (Judge).
          if (w.ref.result.rechecks().empty()) return true;
          ++w.rechecks_judged;
        } else {
          *reported.add_trials() = outputs;
        }
        const bool go =
            w.comparison->Compare(outputs.trial(), recheck, {&reported, dir}) &&
            w.comparison->verdict().status == v1::PASSED;
        if (go) judged_files.Done(*w.job->definition, outputs.trial(), recheck);
        return go;
      };
      run = CallRole(*cand.session, std::move(request),
                     cand.worker.dir, cand.worker.launch.log_path, /*last=*/k + 1 == ready.size(),
                     on_stage, cancel, on_checked);
    }
    const auto judged = absl::Now();
    node.metrics->VerdictStage("candidate", absl::ToDoubleSeconds(judged - t0));
    Judge(run, peak_gbps, w);
    node.metrics->VerdictStage("judge", absl::ToDoubleSeconds(absl::Now() - judged));
    all_passed &= w.out.evaluation.status() == v1::PASSED;
    if (cand.started.ok()) {
      DiscardFolder(node.reaper, absl::StrCat(cand.worker.dir, "/w", w.job->index));
    }
    if (!baselines) {
      // Only the reference's own entry: nothing more runs.
      AddBaselines(node, *w.job, w.base, w.ref, w.ref_timing, w.ref_cached, on_stage, cancel,
                   w.out);
      finish(w);
    }
  }
  // The candidate's process has ended before any baseline is timed.
  cand.session.reset();
  if (program.python_solution != nullptr && all_passed && processes == 1 && cand.started.ok()) {
    (void)CopyPlainTree(absl::StrCat(cand.worker.dir, "/triton_cache"),
                        TritonCacheOf(*first.candidate), /*overwrite=*/false,
                        kMaxTritonCacheBytes);
  }
  if (!cand.spare_dir.empty()) DiscardFolder(node.reaper, cand.spare_dir);
  if (!baselines) return;
  // 3. Baselines, timed on the same inputs with no candidate process left.
  for (WorkloadState* w : ready) {
    on_workload(w->job->index, kRoleBaselines);
    const auto t0 = absl::Now();
    if (!cancelled()) {
      AddBaselines(node, *w->job, w->base, w->ref, w->ref_timing, w->ref_cached, on_stage,
                   cancel, w->out);
    }
    node.metrics->VerdictStage("baselines", absl::ToDoubleSeconds(absl::Now() - t0));
    finish(*w);
  }
}

}  // namespace kiln
