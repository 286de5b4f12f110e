// Solutions written against TVM-FFI (docs/tvm-ffi.md) submitted to a real kiln-harness as
// flashinfer-bench solution files: they compile unchanged (cpp, host backend), run through the
// worker on the built-in vector_add_f32, and their failures come back as RUNTIME_ERROR with
// the reason in the trace's log.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/harness_instance.h"

using namespace kiln::testing;
using nlohmann::json;

namespace {

json SubmitJson(const std::string& solution_path, Completed* completed) {
  *completed = SharedHarness().Kiln(
      {"submit", "--definition", "vector_add_f32", "--solution", solution_path, "--workloads",
       DataPath("vector_add_f32_single.jsonl"), "--mode", "official", "--json"});
  INFO(completed->Describe());
  json j = json::parse(completed->out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  REQUIRE(j["traces"].size() == 1);
  return j;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Submits a solution file that must fail its one workload with RUNTIME_ERROR; the trace's log.
std::string RuntimeErrorLog(const std::string& solution_file) {
  Completed r;
  json j = SubmitJson(DataPath(solution_file), &r);
  INFO(r.Describe());
  CHECK(r.exit_code == 1);
  const json& evaluation = j["traces"][0]["evaluation"];
  CHECK(evaluation["status"] == "RUNTIME_ERROR");
  return evaluation["log"].get<std::string>();
}

}  // namespace

TEST_CASE("a TVM-FFI cpp solution passes the built-in vector_add_f32") {
  Completed r;
  json j =
      SubmitJson(std::string(KILN_SOURCE_DIR) + "/examples/tvm_ffi/vector_add_f32_cpp.json", &r);
  INFO(r.Describe());
  CHECK(r.exit_code == 0);
  CHECK(j["status"] == "PASSED");
  for (const json& t : j["traces"]) {
    CHECK(t["solution"] == "vector_add_f32_tvm_ffi_cpp");
    CHECK(t["evaluation"]["status"] == "PASSED");
    CHECK(t["evaluation"]["performance"]["latency_ms"].get<double>() > 0);
  }
}

TEST_CASE("a failing TVM_FFI_ICHECK is a RUNTIME_ERROR whose log has the check and its line") {
  const std::string log = RuntimeErrorLog("solutions/tvm_ffi_icheck_fails.json");
  INFO(log);
  CHECK(Contains(log, "entry point returned 1"));
  CHECK(Contains(log,
                 "kiln: TVM-FFI function 'run' failed: InternalError: Check failed: "
                 "a.dtype() == (DLDataType{kDLBfloat, 16, 1}) (float32 vs. bfloat16): "
                 "a must be bfloat16"));
  CHECK(Contains(log, "[kernel.cc:10]"));
}

TEST_CASE("a TVM-FFI function taking fewer tensors than the definition passes is a clear error") {
  const std::string log = RuntimeErrorLog("solutions/tvm_ffi_wrong_arity.json");
  INFO(log);
  CHECK(Contains(log, "entry point returned 2"));
  CHECK(Contains(log,
                 "kiln: TVM-FFI function 'run' takes 2 parameters (TensorView, TensorView), "
                 "but the definition passes 3 arguments (its inputs, then its outputs)"));
}
