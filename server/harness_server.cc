#include "server/harness_server.h"

#include <fcntl.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "access/authenticator.h"
#include "access/listen_check.h"
#include "access/principal_quota.h"
#include "access/server_credentials.h"
#include "access/token_file.h"
#include "harness/archive/archive.h"
#include "harness/common/files.h"
#include "harness/compile/compiler.h"
#include "harness/compile/nvcc_toolchain.h"
#include "harness/compile/opencl_toolchain.h"
#include "harness/compile/python_toolchain.h"
#include "harness/compile/toolchain.h"
#include "harness/definitions/builtins.h"
#include "harness/profile/profiling_support.h"
#include "harness/sandbox/program_path.h"
#include "harness/sandbox/sandbox.h"
#include "server/backend.h"
#include "server/evaluation/admission.h"
#include "server/evaluation/reference_timing_cache.h"
#include "server/evaluation/run_progress_board.h"
#include "server/evaluation/folder_reaper.h"
#include "server/evaluation/scratch_space.h"
#include "server/evaluation/scheduler.h"
#include "server/evaluation/spare_workers.h"
#include "server/evaluation/warm_workers.h"
#include "server/log_line.h"
#include "server/metrics_endpoint.h"
#include "server/node_context.h"
#include "server/prometheus_metrics.h"
#include "server/service.h"
#include "web/web_console.h"

namespace kiln {

ListenAccess AccessOf(const HarnessOptions& o) {
  ListenAccess a;
  a.listen = o.listen;
  a.tokens_file = o.tokens_file;
  a.tls_cert = o.tls_cert;
  a.tls_key = o.tls_key;
  a.tls_client_ca = o.tls_client_ca;
  a.allow_insecure_remote = o.allow_insecure_remote;
  return a;
}

namespace {

constexpr int kMaxReceiveBytes = 64 << 20;
constexpr int kSecretBytes = 32;
constexpr absl::Duration kShutdownGrace = absl::Seconds(5);

bool HasAbiHeader(const std::string& dir) {
  return ::access(absl::StrCat(dir, "/kiln/abi.h").c_str(), R_OK) == 0;
}

// Sandboxed compilers see only the folders bound for them, so "bin/../include" would not resolve
// there (bin/ is not bound); hand them the real path.
std::string RealPath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  return ec ? path : real.string();
}

absl::StatusOr<std::string> FindIncludeDir(const std::string& configured) {
  if (!configured.empty()) {
    if (HasAbiHeader(configured)) return RealPath(configured);
    return absl::FailedPreconditionError(
        absl::StrCat("include dir ", configured, " has no kiln/abi.h"));
  }
  const std::string candidates[] = {absl::StrCat(ExecutableDir(), "/../include"),
                                    absl::StrCat(KILN_SOURCE_DIR, "/harness/include")};
  for (const std::string& dir : candidates) {
    if (HasAbiHeader(dir)) return RealPath(dir);
  }
  return absl::FailedPreconditionError(absl::StrCat("kiln/abi.h not found in ", candidates[0],
                                                    " or ", candidates[1], "; set include_dir"));
}

absl::StatusOr<std::string> FindWorker(const std::string& configured) {
  const std::string path =
      configured.empty() ? absl::StrCat(ExecutableDir(), "/kiln-worker") : configured;
  if (::access(path.c_str(), X_OK) == 0) return path;
  return absl::FailedPreconditionError(
      absl::StrCat("kiln-worker not found at ", path, " (or not executable)"));
}

absl::StatusOr<std::string> RandomHex(int bytes) {
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError("cannot open /dev/urandom");
  std::string raw(static_cast<size_t>(bytes), '\0');
  ssize_t n = ::read(fd, raw.data(), raw.size());
  ::close(fd);
  if (n != bytes) return absl::InternalError("short read from /dev/urandom");
  return absl::BytesToHexString(raw);
}

// The secret mixed into every input seed: made once per node and kept in the archive.
absl::StatusOr<std::string> ServerSecret(Archive& archive) {
  auto stored = archive.GetSetting("server_secret");
  if (!stored.ok()) return stored.status();
  if (stored->has_value()) return **stored;
  auto secret = RandomHex(kSecretBytes);
  if (!secret.ok()) return secret.status();
  if (absl::Status s = archive.PutSetting("server_secret", *secret); !s.ok()) return s;
  return secret;
}

absl::StatusOr<std::set<std::string>> RegisterBuiltins(Archive& archive) {
  auto builtins = LoadBuiltinDefinitions();
  if (!builtins.ok()) return builtins.status();
  std::set<std::string> names;
  for (const BuiltinDefinition& b : *builtins) {
    if (absl::Status s = archive.PutDefinition(b.definition, b.workloads, /*builtin=*/true);
        !s.ok()) {
      return s;
    }
    names.insert(b.definition.name());
  }
  return names;
}

absl::Status ValidateOptions(const HarnessOptions& o) {
  if (o.data_dir.empty()) return absl::InvalidArgumentError("data dir: required");
  if (o.listen.empty()) return absl::InvalidArgumentError("listen: required (HOST:PORT)");
  if (o.listen.rfind(':') == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("listen: '", o.listen, "' is not HOST:PORT"));
  }
  if (absl::Status s = ValidateMode(o.default_mode); !s.ok()) return s;
  if (o.compile_threads < 0) {
    return absl::InvalidArgumentError("--compile-threads: must be >= 0 (0: half the CPU cores)");
  }
  if (o.compile_nice < 0 || o.compile_nice > 19) {
    return absl::InvalidArgumentError(
        absl::StrCat("--compile-nice: must be between 0 and 19, not ", o.compile_nice));
  }
  if (o.max_queue < 1) return absl::InvalidArgumentError("max queue: must be >= 1");
  if (!(o.worker_timeout_s > 0)) return absl::InvalidArgumentError("worker timeout: must be > 0");
  if (!(o.compile_timeout_s > 0)) {
    return absl::InvalidArgumentError("compile timeout: must be > 0");
  }
  if (o.max_queued_per_principal < 0 || o.max_runs_per_hour < 0 ||
      o.max_profiles_per_hour < 0) {
    return absl::InvalidArgumentError("per-principal limits: must be >= 0 (0: no limit)");
  }
  if (o.max_workloads < 1) return absl::InvalidArgumentError("max workloads: must be >= 1");
  // A --python given on the command line must be a program (the default, python3, may be
  // missing: the node then serves native references only, and says so).
  if (!o.python.empty() && o.python != "none" && o.python != "python3") {
    absl::StatusOr<std::string> found = FindProgram(o.python);
    std::error_code ec;
    if (!found.ok() || !std::filesystem::is_regular_file(*found, ec) ||
        access(found->c_str(), X_OK) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--python ", o.python, ": ",
          found.ok() ? "no such executable file" : std::string(found.status().message()),
          " (name a python3 that imports torch, or --python none for native references only)"));
    }
  }
  return absl::OkStatus();
}

class HarnessServerImpl final : public HarnessServer {
 public:
  explicit HarnessServerImpl(const HarnessOptions& options) : options_(options) {
    // Sandboxed children run with another working directory; every path handed to them (job
    // folders, blobs, the compile cache) must be absolute.
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(options_.data_dir, ec);
    if (!ec) options_.data_dir = absolute.lexically_normal().string();
  }
  ~HarnessServerImpl() override { Drain(); }

  absl::Status Open();
  absl::Status OpenSandbox();
  absl::Status Listen();

  std::string address() const override { return address_; }
  std::string console_url() const override { return console_ ? console_->url() : ""; }
  std::string metrics_address() const override {
    return metrics_endpoint_ ? metrics_endpoint_->address() : "";
  }
  void Drain() override;
  void Wait() override { stopped_.WaitForNotification(); }

 private:
  absl::Status PrepareDataDir();
  absl::Status OpenArchive();
  absl::Status OpenAccess();
  absl::Status StartMetrics();
  absl::Status StartConsole();
  void StartPythonProbe();

  HarnessOptions options_;
  // The RAM-backed job folder (--scratch-dir, null: none), held while the node runs and removed
  // once everything that wrote there is gone: declared first, destroyed last.
  std::unique_ptr<ScratchFolder> scratch_folder_;
  std::unique_ptr<ScratchSpace> scratch_;
  std::vector<NodeBackend> backends_;
  std::unique_ptr<Archive> archive_;
  std::unique_ptr<Compiler> compiler_;
  std::unique_ptr<ReferenceTimingCache> reference_timings_;
  std::unique_ptr<PythonRuntime> python_;
  std::unique_ptr<PeakBandwidthCache> peak_bandwidth_;
  std::unique_ptr<WarmWorkers> warm_;  // outlives the scheduler and the runs using it
  std::unique_ptr<SpareWorkers> spares_;  // the same
  RunProgressBoard progress_;              // the same
  // Removes the runs' job folders; stopped (everything removed) after the scheduler, before the
  // scratch space and the workers' folders go.
  std::unique_ptr<FolderReaper> reaper_;
  std::set<std::string> builtin_names_;
  NodeContext node_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<PrincipalQuota> quota_;      // outlives the runs holding its slots
  std::unique_ptr<PrometheusMetrics> metrics_;  // outlives the scheduler and the runs
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<HarnessService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::mutex drain_mu_;
  bool drained_ = false;  // guarded by drain_mu_
  absl::Notification stopped_;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;  // reads the scheduler: stopped first
  std::unique_ptr<WebConsole> console_;  // calls server_ in process: stopped before it
};

absl::Status HarnessServerImpl::PrepareDataDir() {
  const std::string& dir = options_.data_dir;
  if (absl::Status s = MakeDirs(dir); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("data dir ", dir, ": ", s.message()));
  }
  if (::access(dir.c_str(), R_OK | W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("data dir ", dir, ": not writable"));
  }
  node_.jobs_dir = absl::StrCat(dir, "/jobs");
  node_.blob_root = absl::StrCat(dir, "/blobs");
  // Job folders left by a previous process belong to runs now marked INTERRUPTED.
  if (absl::Status s = RemoveTree(node_.jobs_dir); !s.ok()) return s;
  if (absl::Status s = MakeDirs(node_.jobs_dir, 0700); !s.ok()) return s;
  std::string note;
  auto fast = PrepareScratchDir(options_.scratch_dir, dir, &note);
  if (!fast.ok()) return fast.status();
  scratch_folder_ = *std::move(fast);
  LogLine(options_.quiet, note);
  return MakeDirs(node_.blob_root);
}

absl::Status HarnessServerImpl::OpenArchive() {
  auto archive = Archive::Open(options_.data_dir);
  if (!archive.ok()) {
    return absl::Status(archive.status().code(), absl::StrCat("archive in ", options_.data_dir,
                                                              ": ", archive.status().message()));
  }
  archive_ = *std::move(archive);
  auto interrupted = archive_->MarkInterrupted();
  if (!interrupted.ok()) return interrupted.status();
  if (*interrupted > 0) {
    LogLine(options_.quiet, absl::StrCat(*interrupted,
                                         " run(s) of a previous process marked "
                                         "INTERRUPTED"));
  }
  auto names = RegisterBuiltins(*archive_);
  if (!names.ok()) return names.status();
  builtin_names_ = *std::move(names);
  auto secret = ServerSecret(*archive_);
  if (!secret.ok()) return secret.status();
  node_.server_secret = *std::move(secret);
  return absl::OkStatus();
}

absl::Status HarnessServerImpl::OpenAccess() {
  if (options_.tokens_file.empty()) {
    auth_ = std::make_unique<Authenticator>(Authenticator::Open());
  } else {
    absl::StatusOr<std::vector<TokenEntry>> tokens = LoadTokenFile(options_.tokens_file);
    if (!tokens.ok()) return tokens.status();
    auth_ = std::make_unique<Authenticator>(Authenticator::WithTokens(*std::move(tokens)));
  }
  quota_ = std::make_unique<PrincipalQuota>(
      QuotaLimits{options_.max_queued_per_principal, options_.max_runs_per_hour});
  metrics_ = std::make_unique<PrometheusMetrics>();
  node_.metrics = metrics_.get();
  return absl::OkStatus();
}

absl::Status HarnessServerImpl::StartMetrics() {
  if (options_.metrics_listen.empty()) return absl::OkStatus();
  metrics_->SetLoadProbe([this] {
    NodeLoad load = scheduler_->Load();
    return LoadSample{load.queue_depth, load.running, load.pending_s,
                      load.held_while_pending_slot_s, load.slots};
  });
  auto endpoint = MetricsEndpoint::Start(options_.metrics_listen,
                                         [this] { return metrics_->Render(); });
  if (!endpoint.ok()) return endpoint.status();
  metrics_endpoint_ = *std::move(endpoint);
  return absl::OkStatus();
}

absl::Status HarnessServerImpl::StartConsole() {
  if (options_.http_listen.empty()) return absl::OkStatus();
  WebConsoleOptions console;
  console.access = AccessOf(options_);
  console.access.listen = options_.http_listen;
  auto started = WebConsole::Start(console, server_->InProcessChannel(grpc::ChannelArguments()));
  if (!started.ok()) return started.status();
  console_ = *std::move(started);
  return absl::OkStatus();
}

// Decides --sandbox from what the host can do. Running unconfined is logged even when quiet.
absl::Status HarnessServerImpl::OpenSandbox() {
  auto sandbox =
      Sandbox::Create(options_.sandbox, IsLoopbackListen(options_.listen), ProbeSandbox());
  if (!sandbox.ok()) return sandbox.status();
  node_.sandbox = *std::move(sandbox);
  LogLine(options_.quiet && node_.sandbox->enabled(), node_.sandbox->Describe());
  node_.worker_memory_bytes = options_.worker_memory_mb > 0
                                  ? options_.worker_memory_mb << 20
                                  : DefaultWorkerMemoryBytes();
  // Outputs written to a tmpfs count against the writer's memory where the sandbox caps it.
  ScratchSpace::FreeBytesFn free_bytes, disk_free_bytes;
  if (options_.scratch_limit_bytes >= 0) {
    free_bytes = [limit = options_.scratch_limit_bytes] { return limit; };
  }
  if (options_.data_dir_limit_bytes >= 0) {
    disk_free_bytes = [limit = options_.data_dir_limit_bytes] { return limit; };
  }
  scratch_ = std::make_unique<ScratchSpace>(
      scratch_folder_ != nullptr ? scratch_folder_->jobs() : "", node_.jobs_dir,
      node_.sandbox->LimitsMemory() ? node_.worker_memory_bytes : 0, std::move(free_bytes),
      std::move(disk_free_bytes));
  node_.scratch = scratch_.get();
  node_.jobs_dir = scratch_->jobs_dir();
  return absl::OkStatus();
}

// Importing torch takes seconds: the node's Python is probed on a thread of its own, and what
// needs it (a Python solution or reference, GetNodeInfo) waits for the answer.
void HarnessServerImpl::StartPythonProbe() {
  python_ = std::make_unique<PythonRuntime>();
  python_->Start(options_.python, node_.worker_path,
                 [quiet = options_.quiet](const PythonReference& p) {
                   LogLine(quiet, absl::StrCat("Python references: ",
                                               p.available ? "" : "unavailable, ", p.note));
                   LogLine(quiet, absl::StrCat("Python solutions: ",
                                               p.torch ? PythonSolutionRuntime(p)
                                                       : "unavailable, " + p.solutions_note));
                 });
}

absl::Status HarnessServerImpl::Open() {
  if (absl::Status s = ValidateOptions(options_); !s.ok()) return s;
  if (absl::Status s = OpenAccess(); !s.ok()) return s;
  auto backends = ResolveNodeBackends(options_.backend, options_.gpus);
  if (!backends.ok()) return backends.status();
  backends_ = *std::move(backends);
  for (const NodeBackend& b : backends_) {
    for (const std::string& warning : b.warnings) {
      LogEvent(false, "device_warning", {{"backend", b.name}, {"warning", warning}});
    }
  }
  auto include_dir = FindIncludeDir(options_.include_dir);
  if (!include_dir.ok()) return include_dir.status();
  auto worker = FindWorker(options_.worker_path);
  if (!worker.ok()) return worker.status();
  if (absl::Status s = PrepareDataDir(); !s.ok()) return s;
  if (absl::Status s = OpenArchive(); !s.ok()) return s;
  if (absl::Status s = OpenSandbox(); !s.ok()) return s;
  node_.worker_path = *std::move(worker);
  StartPythonProbe();

  std::vector<std::unique_ptr<Toolchain>> toolchains;
  toolchains.push_back(MakeHostCxxToolchain(*include_dir, options_.compile_timeout_s));
  // nvcc where it is installed (compiling needs no GPU), for the arches of this node's GPUs.
  std::vector<int> compute_capabilities;
  for (const NodeBackend& b : backends_) {
    compute_capabilities.insert(compute_capabilities.end(), b.compute_capabilities.begin(),
                                b.compute_capabilities.end());
  }
  std::vector<std::string> archs;
  if (!compute_capabilities.empty()) archs = NvccArchListFor(compute_capabilities);
  if (auto nvcc = MakeNvccToolchain(*include_dir, archs, options_.compile_timeout_s); nvcc.ok()) {
    toolchains.push_back(*std::move(nvcc));
  } else {
    LogLine(options_.quiet, absl::StrCat("no CUDA compiler: ", nvcc.status().message()));
  }
  // clang + llvm-spirv for opencl solutions (Level Zero); compiling needs no Intel GPU. The
  // launch plan is bound to the definition the solution names, read from the archive.
  Archive* archive = archive_.get();
  if (auto opencl = MakeOpenClToolchain(
          *include_dir, [archive](const std::string& name) { return archive->GetDefinition(name); },
          options_.compile_timeout_s);
      opencl.ok()) {
    toolchains.push_back(*std::move(opencl));
  } else {
    LogLine(options_.quiet, absl::StrCat("no OpenCL compiler: ", opencl.status().message()));
  }
  // Versions known now; the Python toolchain's waits for the probe (GetNodeInfo asks it then).
  std::vector<std::pair<std::string, std::string>> native_toolchains;
  for (const auto& toolchain : toolchains) {
    native_toolchains.emplace_back(toolchain->Name(), toolchain->Version());
  }
  // load_inline in Python solutions: built by the runner's check with the CUDA toolchain's nvcc
  // and arches (the node's GPUs).
  PythonExtensionBuild extension_build;
  if (absl::StatusOr<std::string> found_nvcc = FindNvcc(); found_nvcc.ok()) {
    absl::StatusOr<std::vector<std::string>> gencode =
        NvccGencodeFlags(archs.empty() ? DefaultNvccArchList() : archs);
    if (gencode.ok()) {
      extension_build.nvcc = *found_nvcc;
      extension_build.gencode = *std::move(gencode);
    }
  }
  // Checks of Python/Triton solutions started ahead of need (--python-spares): on a node with a
  // GPU backend, where their imports run on the CPU beside GPU timings; two, for submissions
  // that arrive together.
  bool gpu_backend = false;
  for (const NodeBackend& b : backends_) gpu_backend |= b.name == "cuda";
  const int check_spares =
      options_.python_spares && (gpu_backend || options_.spares_on_host) ? 2 : 0;
  toolchains.push_back(MakePythonToolchain(
      [python = python_.get()]() -> absl::StatusOr<PythonInterpreter> {
        const PythonReference& p = python->Get();
        if (!p.torch) {
          return absl::FailedPreconditionError(
              absl::StrCat("this node's Python cannot run solutions: ", p.solutions_note));
        }
        return PythonInterpreter{p.python, p.runner, PythonSolutionRuntime(p), p.sys_path,
                                 p.readable_paths};
      },
      [archive](const std::string& name) { return archive->GetDefinition(name); },
      options_.compile_timeout_s, std::move(extension_build), check_spares));
  for (auto& toolchain : toolchains) toolchain->set_sandbox(node_.sandbox);
  // Only kiln's own headers (include/kiln) key the cache, not whatever shares the folder.
  compiler_ = std::make_unique<Compiler>(absl::StrCat(options_.data_dir, "/compile_cache"),
                                         std::move(toolchains), *include_dir + "/kiln");
  reference_timings_ = std::make_unique<ReferenceTimingCache>(archive_.get());
  node_.archive = archive_.get();
  node_.compiler = compiler_.get();
  node_.reference_timings = reference_timings_.get();
  node_.progress = &progress_;
  peak_bandwidth_ =
      std::make_unique<PeakBandwidthCache>(absl::StrCat(options_.data_dir, "/peak_bandwidth.json"));
  node_.peak_bandwidth = peak_bandwidth_.get();
  node_.python = python_.get();
  reaper_ = std::make_unique<FolderReaper>(/*log=*/!options_.quiet);
  node_.reaper = reaper_.get();
  if (options_.warm_references) {
    // A dropped warm worker's folder (the files it kept for its next run) and log are removed
    // off the device slot.
    warm_ = std::make_unique<WarmWorkers>(
        2, [reaper = reaper_.get()](const std::string& dir, const std::string& log) {
          DiscardFolder(reaper, dir);
          if (!log.empty()) DiscardFolder(reaper, log);
        });
    node_.warm = warm_.get();
  }
  node_.keep_reference_files = options_.keep_reference_files;
  if (options_.python_spares) {
    spares_ = std::make_unique<SpareWorkers>();
    node_.spares = spares_.get();
    node_.spares_on_host = options_.spares_on_host;
  }
  node_.worker_timeout_s = options_.worker_timeout_s;
  node_.host_flush_bytes = options_.host_flush_mb << 20;
  node_.compile_timeout_s = options_.compile_timeout_s;
  node_.quiet = options_.quiet;
  node_.libs["kiln"] = KILN_VERSION;
  for (const auto& [name, version] : native_toolchains) node_.libs[name] = version;

  const int compile_threads =
      options_.compile_threads > 0
          ? options_.compile_threads
          : std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 2, 2, 16);
  scheduler_ = std::make_unique<Scheduler>(compile_threads, options_.max_queue, backends_,
                                           metrics_.get(), options_.compile_nice);
  ServiceContext context;
  context.node = &node_;
  context.scheduler = scheduler_.get();
  context.admission.limits.max_source_bytes = options_.max_source_bytes;
  context.admission.limits.max_workload_bytes = options_.max_workload_bytes;
  context.admission.limits.max_workloads = options_.max_workloads;
  context.auth = auth_.get();
  context.quota = quota_.get();
  context.metrics = metrics_.get();
  context.admission.default_mode = options_.default_mode;
  context.check_references = options_.check_references;
  context.admission.backends = &backends_;
  context.admission.python = python_.get();
  context.facts = NodeFacts{KILN_VERSION, backends_, native_toolchains, options_.default_mode,
                            std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count(),
                            /*profiling=*/""};
  int cuda_devices = 0;
  for (const NodeBackend& b : backends_) {
    if (b.name == "cuda") cuda_devices += static_cast<int>(b.devices.size());
  }
  node_.profiling = options_.profiling.has_value()
                        ? *options_.profiling
                        : CheckProfiling(cuda_devices, ProfilerSearchDirs());
  context.facts.profiling = DescribeProfiling(node_.profiling);
  context.max_profiles_per_hour = options_.max_profiles_per_hour;
  context.builtin_definitions = builtin_names_;
  service_ = std::make_unique<HarnessService>(std::move(context));
  return absl::OkStatus();
}

absl::Status HarnessServerImpl::Listen() {
  if (absl::Status s = CheckListenAddress(options_.listen, "kiln-harness"); !s.ok()) return s;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  auto credentials = MakeServerCredentials(AccessOf(options_));
  if (!credentials.ok()) return credentials.status();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options_.listen, *credentials, &port);
  // Without this, a second server could bind a port already in use (SO_REUSEPORT).
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) {
    server_.reset();
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.listen));
  }
  address_ = absl::StrCat(options_.listen.substr(0, options_.listen.rfind(':')), ":", port);
  if (absl::Status s = StartMetrics(); !s.ok()) return s;
  if (absl::Status s = StartConsole(); !s.ok()) return s;
  LogEvent(options_.quiet, "serving",
           {{"address", address_},
            {"backend", backends_[0].name},
            {"mode", options_.default_mode},
            {"data_dir", options_.data_dir},
            {"auth", auth_->open() ? "none (loopback only)" : options_.tokens_file},
            {"tls", options_.tls_cert.empty()              ? "off"
                    : options_.tls_client_ca.empty()       ? "on"
                                                           : "mutual"},
            {"metrics", metrics_endpoint_ ? metrics_endpoint_->address() : "off"},
            {"console", console_ ? console_->url() : "off"}});
  return absl::OkStatus();
}

void HarnessServerImpl::Drain() {
  std::lock_guard<std::mutex> lock(drain_mu_);
  if (drained_) return;
  drained_ = true;
  if (scheduler_ != nullptr) scheduler_->StopAdmitting();
  if (server_ != nullptr) server_->GetHealthCheckService()->SetServingStatus(false);
  if (scheduler_ != nullptr) scheduler_->WaitUntilIdle();
  if (console_ != nullptr) console_->Stop();
  // Every run has sent its verdict; the grace period lets the last events reach their clients.
  if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now() + kShutdownGrace));
  if (scheduler_ != nullptr) scheduler_->Stop();
  if (server_ != nullptr) LogLine(options_.quiet, "drained and stopped");
  stopped_.Notify();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HarnessServer>> HarnessServer::Start(const HarnessOptions& options) {
  // Workers and compilers are children talking over pipes: a child that dies mid-write must not
  // take the harness with it.
  ::signal(SIGPIPE, SIG_IGN);
  auto server = std::make_unique<HarnessServerImpl>(options);
  if (absl::Status s = server->Open(); !s.ok()) return s;
  if (absl::Status s = server->Listen(); !s.ok()) return s;
  return std::unique_ptr<HarnessServer>(std::move(server));
}

}  // namespace kiln
