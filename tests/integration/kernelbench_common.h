// What the KernelBench integration tests share: SKIP_WITHOUT_TORCH() (a test case that needs the
// python3 with torch found when kiln was configured, KILN_TEST_PYTHON, returns with a visible
// warning where there is none) and reading a `kiln submit --json` verdict.
#ifndef KILN_TESTS_INTEGRATION_KERNELBENCH_COMMON_H_
#define KILN_TESTS_INTEGRATION_KERNELBENCH_COMMON_H_

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/harness_instance.h"

#define SKIP_WITHOUT_TORCH()                                                                \
  do {                                                                                      \
    if (std::string(KILN_TEST_PYTHON).empty()) {                                            \
      WARN("SKIPPED: no python3 with torch was found when kiln was configured "             \
           "(apt-get install python3-torch)");                                              \
      return;                                                                               \
    }                                                                                       \
  } while (0)

namespace kiln::testing {

// The run's verdict, as `kiln submit --json` prints it.
inline std::string Status(const Completed& submitted) {
  const nlohmann::json run = nlohmann::json::parse(submitted.out, nullptr, false);
  if (!run.is_object()) return "(no JSON: " + submitted.Describe() + ")";
  return run.value("status", std::string("(none)"));
}

// The first trace's reason (TraceDetail.reason), as `kiln submit --json` prints it.
inline std::string Reason(const Completed& submitted) {
  const nlohmann::json run = nlohmann::json::parse(submitted.out, nullptr, false);
  if (!run.is_object() || !run["traces"].is_array() || run["traces"].empty()) {
    return "(no trace: " + submitted.Describe() + ")";
  }
  const nlohmann::json& trace = run["traces"][0];
  if (trace.contains("kiln") && trace["kiln"].contains("reason")) {
    return trace["kiln"]["reason"].get<std::string>();
  }
  return "(no reason: " + trace.dump() + ")";
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_INTEGRATION_KERNELBENCH_COMMON_H_
