// What every evaluation on a node shares: the archive, the compiler, the reference timing cache
// and the node's settings. Owned by the HarnessServer; outlives every run.
#ifndef KILN_SERVER_NODE_CONTEXT_H_
#define KILN_SERVER_NODE_CONTEXT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "harness/archive/archive.h"
#include "harness/compile/compiler.h"
#include "harness/profile/profiling_support.h"
#include "harness/python/python_reference.h"
#include "harness/sandbox/sandbox.h"
#include "server/evaluation/reference_timing_cache.h"
#include "server/evaluation/speed_of_light.h"
#include "server/metrics.h"

namespace kiln {

class FolderReaper;
class RunProgressBoard;
class ScratchSpace;
class SpareWorkers;
class WarmWorkers;

struct NodeContext {
  Archive* archive = nullptr;
  Compiler* compiler = nullptr;
  ReferenceTimingCache* reference_timings = nullptr;
  PeakBandwidthCache* peak_bandwidth = nullptr;  // null: no speed-of-light floor is applied
  // One folder per running run, and the warm and spare workers' folders: the RAM-backed
  // scratch folder when the node has one, else <data dir>/jobs.
  std::string jobs_dir;
  // Decides whether a run's outputs fit in the RAM-backed folder (null: tests; jobs_dir only).
  ScratchSpace* scratch = nullptr;
  // Removes the runs' job folders off their device slots (null: removed where discarded).
  FolderReaper* reaper = nullptr;
  std::string blob_root;      // where relative safetensors paths of workloads resolve
  std::string worker_path;    // kiln-worker
  std::string server_secret;  // mixed into every input seed
  double worker_timeout_s = 300;
  double compile_timeout_s = 120;
  std::map<std::string, std::string> libs;  // Environment.libs of every trace
  bool quiet = false;
  Metrics* metrics = NullMetrics();  // never null
  // The sandbox of every compiler and worker (null or disabled: unconfined), and the memory
  // one worker may use in it.
  std::shared_ptr<const Sandbox> sandbox;
  int64_t worker_memory_bytes = int64_t{16} << 30;
  // Cache-flush bytes of host-backend timings in official and robust modes (0: twice the
  // last-level cache, the protocol's default). Recorded in every TimingResult.
  int64_t host_flush_bytes = 0;
  // The node's Python, for references and Python/Triton solutions (null: neither).
  const PythonRuntime* python = nullptr;
  // Warm reference workers kept between runs (null: every reference gets a worker of its own).
  WarmWorkers* warm = nullptr;
  // Whether a warm reference worker's output files of a run are kept for its next run to write
  // over in place (workload_evaluation.cc, KeepReferenceFiles).
  bool keep_reference_files = true;
  // Python runners started ahead of need, for Python/Triton candidates and Python references
  // (null: none). On GPU backends only, unless spares_on_host (tests).
  SpareWorkers* spares = nullptr;
  bool spares_on_host = false;
  // Whether Nsight Compute can profile here (checked at start), and the ncu that does.
  ProfilingSupport profiling;
  // The last progress line of each run in flight (null: not kept).
  RunProgressBoard* progress = nullptr;
};

}  // namespace kiln

#endif  // KILN_SERVER_NODE_CONTEXT_H_
