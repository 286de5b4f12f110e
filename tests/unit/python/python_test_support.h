// Shared pieces of the Python solution tests: the interpreter with torch that the build found
// (KILN_TEST_PYTHON, empty when none), one harness node using it, and solution builders for the
// built-in vector_add_f32.
#ifndef KILN_TESTS_UNIT_PYTHON_PYTHON_TEST_SUPPORT_H_
#define KILN_TESTS_UNIT_PYTHON_PYTHON_TEST_SUPPORT_H_

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "kiln/v1/types.pb.h"
#include "tests/unit/server/test_node.h"

namespace kiln::testing {

// The python3 that imports torch, as found when the build was configured ("" when none).
inline const std::string& TestPython() {
  static const std::string python = KILN_TEST_PYTHON;
  return python;
}

// A test that needs torch returns early, saying so, where the build found none.
#define SKIP_WITHOUT_TORCH()                                                               \
  do {                                                                                     \
    if (::kiln::testing::TestPython().empty()) {                                           \
      WARN("SKIPPED: no python3 with torch was found when kiln was configured "            \
           "(apt-get install python3-torch)");                                             \
      return;                                                                              \
    }                                                                                      \
  } while (0)

inline HarnessOptions NodeWithPython(const std::string& python) {
  HarnessOptions options;
  options.python = python;
  return options;
}

// One node with the test python for every test of the executable (started on first use).
inline TestNode& PythonNode() {
  static auto* node = new TestNode(NodeWithPython(TestPython()));
  return *node;
}

// The run `request` made on `node`, whatever its verdict: the call succeeded, one trace.
inline v1::Run EvaluatedRun(TestNode& node, const v1::EvaluateRequest& request) {
  EvaluateOutcome out = Evaluate(node.stub(), request);
  INFO(out.status.error_message());
  REQUIRE(out.status.ok());
  v1::Run run = out.run();
  REQUIRE(run.traces_size() == 1);
  return run;
}

// A Python solution of vector_add_f32 in kernel.py with entry `run`.
inline v1::Solution PythonSolution(const std::string& name, const std::string& source,
                                   bool dps = true, const std::string& language = "python") {
  v1::Solution s;
  s.set_name(name);
  s.set_definition("vector_add_f32");
  s.set_author("tests");
  s.mutable_spec()->set_language(language);
  s.mutable_spec()->add_target_hardware("cpu");
  s.mutable_spec()->set_entry_point("kernel.py::run");
  s.mutable_spec()->set_destination_passing_style(dps);
  v1::SourceFile* f = s.add_sources();
  f->set_path("kernel.py");
  f->set_content(source);
  return s;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_PYTHON_PYTHON_TEST_SUPPORT_H_
