// A running kiln-harness: the gRPC service kiln.v1.Harness over an archive, a compile pool, a
// bounded queue and the node's device slots. Used by kiln-harness's main and by `kiln demo`,
// which embeds one.
#ifndef KILN_SERVER_HARNESS_SERVER_H_
#define KILN_SERVER_HARNESS_SERVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "access/server_credentials.h"
#include "harness/profile/profiling_support.h"

namespace kiln {

struct HarnessOptions {
  std::string listen = "127.0.0.1:50051";  // HOST:PORT; port 0 picks a free one
  std::string data_dir;                    // archive, compile cache, job folders
  // Where workers' folders (and the outputs they write for the judge) live: "auto" (/dev/shm
  // when it is a tmpfs), "" (the data dir) or a folder (server/evaluation/scratch_space.h).
  std::string scratch_dir;
  // Tests only: the bytes the scratch folder is taken to have free (-1: measured).
  int64_t scratch_limit_bytes = -1;
  // Tests only: the bytes the data dir's file system is taken to have free (-1: measured).
  int64_t data_dir_limit_bytes = -1;
  std::string backend = "auto";            // auto | host | cuda | level_zero
  std::string gpus = "all";                // CUDA devices served: all | "0,2,5" (--gpus)
  std::string default_mode = "official";   // official | kernelbench | robust
  std::string worker_path;                 // empty: kiln-worker next to this executable
  // The python3 whose torch runs definitions' Python references and Python/Triton solutions
  // ("none": native references only, no Python solutions). Probed at start in the background;
  // without torch the node falls back to native references and refuses Python solutions.
  std::string python = "python3";
  std::string include_dir;                 // empty: found next to the executable or in source
  // Compiles run side by side (the compile pool); 0: half the CPU cores, between 2 and 16.
  int compile_threads = 0;
  // Added to the nice value of the compile threads and the compilers they start (0 to 19).
  int compile_nice = 0;
  int max_queue = 64;             // admitted, unfinished runs; beyond: RESOURCE_EXHAUSTED
  double worker_timeout_s = 300;  // one worker (one role, one workload)
  double compile_timeout_s = 120;
  int64_t max_source_bytes = 1 << 20;
  int64_t max_workload_bytes = int64_t{4} << 30;
  bool quiet = false;            // no log lines on stderr
  // A definition added through PutDefinition gets a run of its native reference on its first
  // workload, which flags it when all-zero or constant output would pass
  // (integrity.degenerate_definition).
  bool check_references = true;
  // References served by warm workers kept between runs (server/evaluation/warm_workers.h).
  bool warm_references = true;
  // A warm reference worker's output files of a run kept (up to 2 GiB a worker) for its next run
  // to write over in place instead of making new pages.
  bool keep_reference_files = true;
  // Python runners started ahead of need, on GPU backends: for Python/Triton candidates, and
  // for Python references of definitions no warm worker serves yet
  // (server/evaluation/spare_workers.h).
  bool python_spares = true;
  // Tests only: spares on the host backend too, where their warm-up (import torch) runs on the
  // CPU that a run beside it is timed on.
  bool spares_on_host = false;
  std::string sandbox = "auto";  // auto | bwrap | none (see kiln::Sandbox::Create)
  int64_t worker_memory_mb = 0;  // one sandboxed worker; 0: half the RAM, <= 16 GiB
  // Host backend, official and robust modes: the cache-flush buffer in MiB (0: twice the
  // last-level cache). For machines whose reported L3 makes every flush slow (a VM that shows
  // its host's whole L3); the flush used is recorded with every timing.
  int64_t host_flush_mb = 0;

  // Access, tenancy and operations (server/access_flags.cc lists the flags).
  std::string tokens_file;    // empty: loopback only, every caller is the operator "local"
  std::string tls_cert;       // PEM; with tls_key: serve TLS
  std::string tls_key;        // PEM
  std::string tls_client_ca;  // PEM; set: clients must present a certificate it signed (mTLS)
  bool allow_insecure_remote = false;  // plaintext on a non-loopback address
  int max_queued_per_principal = 0;    // 0: no limit (operators are never limited)
  int max_runs_per_hour = 0;           // per principal; 0: no limit
  int max_profiles_per_hour = 30;      // Nsight Compute profiles per principal; 0: no limit
  // Whether this node can profile: found by CheckProfiling at start when unset (tests set it to
  // reach the checks that follow it on a node without a GPU).
  std::optional<ProfilingSupport> profiling;
  int max_workloads = 1024;            // per run
  std::string metrics_listen;          // HOST:PORT of the Prometheus endpoint; empty: none
  std::string http_listen;             // HOST:PORT of the web console; empty: none
};

// The listen address and access flags of `options`, for MakeServerCredentials.
ListenAccess AccessOf(const HarnessOptions& options);

class HarnessServer {
 public:
  // Opens the archive (migrating, marking interrupted runs), loads built-in definitions,
  // binds and starts serving. Errors name what failed (bind address, data dir, ...).
  static absl::StatusOr<std::unique_ptr<HarnessServer>> Start(const HarnessOptions& options);
  virtual ~HarnessServer() = default;

  // "HOST:PORT" actually bound (the real port when 0 was asked).
  virtual std::string address() const = 0;
  // "HOST:PORT" of the metrics endpoint; empty without one.
  virtual std::string metrics_address() const { return ""; }
  // "http://HOST:PORT" (https with TLS) of the web console; empty without one.
  virtual std::string console_url() const { return ""; }
  // Stops admitting work, lets running evaluations finish, then stops the server. Blocks.
  virtual void Drain() = 0;
  // Blocks until the server has stopped.
  virtual void Wait() = 0;
};

}  // namespace kiln

#endif  // KILN_SERVER_HARNESS_SERVER_H_
