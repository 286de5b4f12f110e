// What every evaluation on a node shares: the archive, the compiler, the reference timing cache
// and the node's settings. Owned by the HarnessServer; outlives every run.
#ifndef KILN_SERVER_NODE_CONTEXT_H_
#define KILN_SERVER_NODE_CONTEXT_H_

#include <map>
#include <string>

#include "harness/archive/archive.h"
#include "harness/compile/compiler.h"
#include "server/reference_timing_cache.h"

namespace kiln {

struct NodeContext {
  Archive* archive = nullptr;
  Compiler* compiler = nullptr;
  ReferenceTimingCache* reference_timings = nullptr;
  std::string jobs_dir;       // <data dir>/jobs: one folder per running run
  std::string blob_root;      // where relative safetensors paths of workloads resolve
  std::string worker_path;    // kiln-worker
  std::string server_secret;  // mixed into every input seed
  double worker_timeout_s = 300;
  double compile_timeout_s = 120;
  std::map<std::string, std::string> libs;  // Environment.libs of every trace
  bool quiet = false;
};

}  // namespace kiln

#endif  // KILN_SERVER_NODE_CONTEXT_H_
