// Definitions every kiln-harness ships with (harness/definitions/*.json, workloads in the
// matching *.jsonl), each carrying a native_reference so it evaluates on any node, and the
// solution `kiln demo` submits. They are compiled into the binary.
#ifndef KILN_HARNESS_DEFINITIONS_BUILTINS_H_
#define KILN_HARNESS_DEFINITIONS_BUILTINS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

struct BuiltinDefinition {
  v1::Definition definition;
  std::vector<v1::Workload> workloads;
};

// Parses the embedded files. An error here is a build defect (the test suite loads them).
absl::StatusOr<std::vector<BuiltinDefinition>> LoadBuiltinDefinitions();

// The definition `kiln demo` evaluates, and the solution it submits for it.
inline constexpr char kDemoDefinitionName[] = "rmsnorm_h2048";
absl::StatusOr<v1::Solution> BuiltinDemoSolution();

// The native reference kiln ships for a definition that has none of its own (the
// flashinfer-trace gemm and rmsnorm definitions; harness/definitions/native_references/), or
// nullopt when kiln ships none for that name.
absl::StatusOr<std::optional<v1::Solution>> ShippedNativeReference(const std::string& definition);

}  // namespace kiln

#endif  // KILN_HARNESS_DEFINITIONS_BUILTINS_H_
