// `kiln-harness --check`: the report says whether the node can profile with Nsight Compute, and
// why not, in JSON and in the table.
#include "server/node_check.h"

#include <catch2/catch.hpp>
#include <string>

namespace kiln {
namespace {

TEST_CASE("the node check says whether Nsight Compute can profile, and why not") {
  HarnessOptions options;
  options.backend = "host";
  nlohmann::json report = CheckNode(options);
  REQUIRE(report.contains("profiling"));
  const nlohmann::json& p = report["profiling"];
  REQUIRE(p.contains("available"));
  // Without a CUDA backend there is nothing to profile, whatever else the node has.
  CHECK_FALSE(p["available"].get<bool>());
  CHECK(p["reason"].get<std::string>() == "no CUDA GPU on this node");
  const std::string table = NodeCheckTable(report);
  CHECK_THAT(table, Catch::Contains("profiling (Nsight Compute)"));
  CHECK_THAT(table, Catch::Contains("unavailable: no CUDA GPU on this node"));
}

}  // namespace
}  // namespace kiln
