#include "server/sandbox_flags.h"

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "server/node_check.h"

ABSL_FLAG(std::string, sandbox, "auto",
          "auto | bwrap | none: auto uses bubblewrap when it works and refuses a non-loopback "
          "--listen without it");
ABSL_FLAG(int64_t, worker_memory_mb, 0,
          "memory of one sandboxed worker, MiB; 0: half the RAM, at most 16 GiB");
ABSL_FLAG(std::string, gpus, "all",
          "CUDA devices this node serves, one device slot each: all, or indices such as 0,2,5");
ABSL_FLAG(bool, check, false, "report what this node can do and exit (1: no usable sandbox)");
ABSL_FLAG(bool, json, false, "with --check: the report as JSON");

namespace kiln {

const char kSandboxFlagsUsage[] =
    "Sandbox:\n"
    "  --sandbox auto|bwrap|none  compilers and workers run in bubblewrap (new user, mount, pid,\n"
    "                            net, IPC namespaces; seccomp; rlimits; cgroup where delegated).\n"
    "                            auto: bwrap when it works, else unconfined on loopback only;\n"
    "                            none: unconfined (logged at start)\n"
    "  --worker-memory-mb N      memory of one sandboxed worker (0: half the RAM, <= 16 GiB)\n"
    "  --gpus all|LIST           CUDA devices served, one device slot each (default all; e.g.\n"
    "                            0,2,5). A sandboxed worker sees only its GPU's /dev/nvidiaN;\n"
    "                            with --sandbox none, CUDA_VISIBLE_DEVICES only (no isolation)\n"
    "  --check [--json]          report backends, devices, sandbox, seccomp, cgroups, GPU and profiling\n"
    "                            device nodes, then exit: 0 when the sandbox works, else 1\n";

void ApplySandboxFlags(HarnessOptions* o) {
  o->sandbox = absl::GetFlag(FLAGS_sandbox);
  o->worker_memory_mb = absl::GetFlag(FLAGS_worker_memory_mb);
  o->gpus = absl::GetFlag(FLAGS_gpus);
}

bool NodeCheckRequested() { return absl::GetFlag(FLAGS_check); }

int RunRequestedCheck(const HarnessOptions& options) {
  return RunNodeCheck(options, absl::GetFlag(FLAGS_json));
}

}  // namespace kiln
