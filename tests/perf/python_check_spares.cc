// python_check_spares: the compile stage of a new Python/Triton solution with and without a
// check started ahead of need (MakePythonToolchain's `spares`), side by side. Every round
// compiles one new source (a cache miss) with each of two compilers, in alternating order: one
// that starts every check afresh, one that keeps a spare. Between rounds it waits GAP_S seconds,
// the time an agent or a team takes to write its next candidate, in which the spare imports.
// Prints a JSON object: each compile's seconds per compiler, their medians and the ratio.
//
// Usage: python_check_spares PYTHON RUNNER ROUNDS GAP_S [SOURCE.py]
//   PYTHON  a python3 that imports torch (and triton, where the node has it)
//   RUNNER  kiln_python_runner.py (build/share/kiln/python/ or a bundle's share/kiln/python/)
//   SOURCE  the solution's kernel.py (entry run); default: a torch solution of vector_add_f32
//
// The checks run unsandboxed here (the harness runs them in bubblewrap, whose start a spare
// also takes off the critical path; not measured by this program).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/common/files.h"
#include "harness/compile/compiler.h"
#include "harness/compile/python_toolchain.h"

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "python_check_spares: %s\n", what.c_str());
  std::exit(2);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string JsonList(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += absl::StrCat(i == 0 ? "" : ", ", v[i]);
  return out + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    Die("usage: python_check_spares PYTHON RUNNER ROUNDS GAP_S [SOURCE.py]");
  }
  const std::string python = argv[1];
  const std::string runner = argv[2];
  const int rounds = std::atoi(argv[3]);
  const double gap_s = std::atof(argv[4]);
  std::string source = "import torch\n\ndef run(a, b, c):\n    torch.add(a, b, out=c)\n";
  if (argc > 5) {
    absl::StatusOr<std::string> text = kiln::ReadFile(argv[5]);
    if (!text.ok()) Die(std::string(text.status().message()));
    source = *text;
  }
  absl::StatusOr<std::string> scratch = kiln::MakeTempDir("", "kiln-check-spares");
  if (!scratch.ok()) Die(std::string(scratch.status().message()));
  auto make = [&](const std::string& dir, int spares) {
    std::vector<std::unique_ptr<kiln::Toolchain>> toolchains;
    toolchains.push_back(kiln::MakePythonToolchain(
        [python, runner]() -> absl::StatusOr<kiln::PythonInterpreter> {
          return kiln::PythonInterpreter{python, runner, "perf python", {}, {}};
        },
        nullptr, kiln::kDefaultPythonCheckTimeoutS, {}, spares));
    return std::make_unique<kiln::Compiler>(dir, std::move(toolchains));
  };
  auto fresh = make(*scratch + "/fresh", 0);
  auto spared = make(*scratch + "/spared", 1);
  int serial = 0;
  auto compile = [&](kiln::Compiler& compiler) {
    kiln::v1::Solution s;
    s.set_name(absl::StrCat("perf_", serial));
    s.mutable_spec()->set_language("python");
    s.mutable_spec()->set_entry_point("kernel.py::run");
    kiln::v1::SourceFile* f = s.add_sources();
    f->set_path("kernel.py");
    f->set_content(absl::StrCat(source, "\n# new source ", serial++, "\n"));  // a cache miss
    const double t0 = Now();
    absl::StatusOr<kiln::CompileOutput> out = compiler.Compile(s, "host");
    const double seconds = Now() - t0;
    if (!out.ok()) Die(std::string(out.status().message()));
    if (!out->ok) Die("the check failed:\n" + out->log);
    return seconds;
  };
  // The spare compiler's first check starts its first spare.
  compile(*spared);
  std::vector<double> without, with;
  for (int r = 0; r < rounds; ++r) {
    std::this_thread::sleep_for(std::chrono::duration<double>(gap_s));
    if (r % 2 == 0) {
      without.push_back(compile(*fresh));
      with.push_back(compile(*spared));
    } else {
      with.push_back(compile(*spared));
      without.push_back(compile(*fresh));
    }
    std::fprintf(stderr, "python_check_spares: round %d/%d: fresh %.3f s, started ahead %.3f s\n",
                 r + 1, rounds, without.back(), with.back());
  }
  fresh.reset();
  spared.reset();
  (void)kiln::RemoveTree(*scratch);
  const double a = Median(without), b = Median(with);
  std::printf(
      "{\"rounds\": %d, \"gap_s\": %g, \"fresh_s\": %s, \"started_ahead_s\": %s, "
      "\"fresh_median_s\": %.4f, \"started_ahead_median_s\": %.4f, \"ratio\": %.3f}\n",
      rounds, gap_s, JsonList(without).c_str(), JsonList(with).c_str(), a, b, a > 0 ? b / a : 0);
  return 0;
}
