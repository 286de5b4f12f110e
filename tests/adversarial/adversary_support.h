// The adversarial corpus's harness: one in-process kiln-harness (real compiles, real kiln-worker
// processes, real comparison) shared by every test of the executable, and vector_add_f32
// solutions written out in full, so each adversary reads as the exploit it is.
#ifndef KILN_TESTS_ADVERSARIAL_ADVERSARY_SUPPORT_H_
#define KILN_TESTS_ADVERSARIAL_ADVERSARY_SUPPORT_H_

#include <string>
#include <vector>

#include "kiln/v1/harness.grpc.pb.h"
#include "kiln/v1/types.pb.h"

namespace kiln::adversarial {

// The node every test uses (started on first use, data in a temp dir).
v1::Harness::Stub& Node();

// A cpp solution of `definition` (vector_add_f32 or a copy) with entry `run` in solution.cc.
v1::Solution CppSolution(const std::string& name, const std::string& source,
                         const std::string& definition = "vector_add_f32");

// A python solution (entry kernel.py::run) of `definition`; `dps` false: value-returning.
v1::Solution PythonSolution(const std::string& name, const std::string& source, bool dps = true,
                            const std::string& definition = "vector_add_f32");
// Whether the node's Python imports torch (the Python adversaries need it).
bool HasTorch();

// Evaluates `solution` on one random workload of n elements in `mode`; fails the test when the
// stream breaks. The run's final state.
v1::Run Evaluate(const v1::Solution& solution, int64_t n, const std::string& mode = "kernelbench");

// Registers a copy of vector_add_f32 named `name` with extra `tags` and a native reference whose
// output is (a + b) * scale.
void PutScaledAddDefinition(const std::string& name, double scale,
                            const std::vector<std::string>& tags);

// The integrity_warning `kiln defs list` shows for `definition` ("" when none).
std::string DefinitionWarning(const std::string& definition);

// Every warning of the run's traces, joined by newlines.
std::string Warnings(const v1::Run& run);

}  // namespace kiln::adversarial

#endif  // KILN_TESTS_ADVERSARIAL_ADVERSARY_SUPPORT_H_
