#include "client/rejection_advice.h"

#include <catch2/catch.hpp>

#include "harness/verify/integrity_policy.h"

namespace kiln::cli {
namespace {

TEST_CASE("every integrity check's reason comes with one sentence of advice") {
  for (const char* check :
       {integrity::kUnwrittenOutput, integrity::kInputMutation, integrity::kStaleOutput,
        integrity::kOutputCaching, integrity::kWorkAfterReturn, integrity::kFasterThanMemory,
        integrity::kDegenerateDefinition, integrity::kForbiddenSymbol,
        integrity::kNondeterministic, integrity::kOutputFile, integrity::kNoOwnKernel,
        integrity::kExceptionFallback, integrity::kInheritsReference,
        integrity::kRunnerTampered, integrity::kOutputAliasesInput}) {
    INFO(check);
    std::string advice = RejectionAdvice(integrity::Reason(check, "details"));
    CHECK_FALSE(advice.empty());
    CHECK(advice.back() == '.');
  }
}

TEST_CASE("a reason that names no integrity check gets no advice") {
  CHECK(RejectionAdvice("output 'c' trial 0: 3/4096 elements off").empty());
  CHECK(RejectionAdvice("integrity.no_such_check: x").empty());
}

}  // namespace
}  // namespace kiln::cli
