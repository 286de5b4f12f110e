// What a kiln-harness node reports about itself (GetNodeInfo) and the facts it is built from.
#ifndef KILN_SERVER_NODE_INFO_H_
#define KILN_SERVER_NODE_INFO_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/python/python_reference.h"
#include "kiln/v1/harness.pb.h"
#include "server/backend.h"

namespace kiln {

// The CPU model ("model name" in /proc/cpuinfo), or "unknown CPU". The host backend's device.
std::string CpuModelName();

// The fixed part of a node's description.
struct NodeFacts {
  std::string version;
  std::vector<NodeBackend> backends;                            // the first is the default
  std::vector<std::pair<std::string, std::string>> toolchains;  // name, version
  std::string default_mode;
  int64_t started_unix_ms = 0;  // when the process started
  std::string profiling;        // DescribeProfiling of the node, checked at start
};

// The moving part, sampled when asked.
struct NodeLoad {
  int queue_depth = 0;
  int running = 0;
  std::vector<std::vector<bool>> busy;  // [backend][device], same order as NodeFacts::backends
  int64_t runs_archived = 0;
  double pending_s = 0;                  // time with admitted, unfinished runs
  double held_while_pending_slot_s = 0;  // device-slot seconds held by a run meanwhile
  int slots = 0;                         // device slots, all backends
};

v1::NodeInfo DescribeNode(const NodeFacts& facts, const NodeLoad& load);

// Fills info.languages (and the python toolchain) from the backends and the node's probed Python
// (null: none).
void DescribeLanguages(const NodeFacts& facts, const PythonReference* python, v1::NodeInfo* info);

}  // namespace kiln

#endif  // KILN_SERVER_NODE_INFO_H_
