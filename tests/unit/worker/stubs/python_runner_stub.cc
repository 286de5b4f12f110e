// A stand-in for kiln_python_runner.py that needs no torch: loads libkiln_worker_python.so the
// way the Python runner does (dlopen, the kiln_runner_* C API) and serves a value-returning
// vector add (c = a + b kept in the stub's own memory; copied out only when kiln collects).
// Counts its calls in <cwd>/calls.txt so the test can tell timed calls from checked ones.
//
//   python_runner_stub LIB [--no-collect] [--fail MESSAGE] [--solution] [--refuse-collect N CODE]
//
// --solution serves as a value-returning candidate (kiln_runner_serve_solution: collected after
// every call); --refuse-collect makes the Nth collect (from 1) return CODE with a note.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/abi.h"

namespace {

std::vector<float> result;  // the last call's output
int entries = 0;
int collects = 0;
int refuse_at = 0;
int refuse_code = 0;
void (*note_failure)(const char*) = nullptr;

int Add(const kiln_tensor* args, int32_t nargs, const kiln_context*) {
  ++entries;
  if (nargs != 3) return 1;
  const int64_t n = args[0].shape[0];
  result.resize(static_cast<size_t>(n));
  const auto* a = static_cast<const float*>(args[0].data);
  const auto* b = static_cast<const float*>(args[1].data);
  for (int64_t i = 0; i < n; ++i) result[static_cast<size_t>(i)] = a[i] + b[i];
  return 0;
}

int Collect(const kiln_tensor* args, int32_t nargs, const kiln_context*) {
  ++collects;
  if (collects == refuse_at) {
    note_failure("integrity.runner_tampered: the stub refuses this collect");
    return refuse_code;
  }
  if (nargs != 3 || static_cast<int64_t>(result.size()) != args[2].shape[0]) return 1;
  std::memcpy(args[2].data, result.data(), result.size() * sizeof(float));
  return 0;
}

void WriteCounts() {
  if (FILE* f = std::fopen("calls.txt", "w")) {
    std::fprintf(f, "%d %d\n", entries, collects);
    std::fclose(f);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  bool collect = true;
  bool solution = false;
  const char* fail = nullptr;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-collect") == 0) collect = false;
    if (std::strcmp(argv[i], "--solution") == 0) solution = true;
    if (std::strcmp(argv[i], "--fail") == 0 && i + 1 < argc) fail = argv[++i];
    if (std::strcmp(argv[i], "--refuse-collect") == 0 && i + 2 < argc) {
      refuse_at = std::atoi(argv[++i]);
      refuse_code = std::atoi(argv[++i]);
    }
  }
  void* core = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (core == nullptr) {
    std::fprintf(stderr, "stub: %s\n", dlerror());
    return 2;
  }
  using ReadFn = int (*)();
  using JsonFn = const char* (*)();
  using ServeFn = int (*)(kiln_entry, kiln_entry);
  using FailFn = int (*)(const char*);
  auto read = reinterpret_cast<ReadFn>(dlsym(core, "kiln_runner_read_request"));
  auto json = reinterpret_cast<JsonFn>(dlsym(core, "kiln_runner_definition_json"));
  auto serve = reinterpret_cast<ServeFn>(dlsym(core, "kiln_runner_serve"));
  auto fail_fn = reinterpret_cast<FailFn>(dlsym(core, "kiln_runner_fail"));
  auto serve_solution = reinterpret_cast<ServeFn>(dlsym(core, "kiln_runner_serve_solution"));
  note_failure = reinterpret_cast<void (*)(const char*)>(dlsym(core, "kiln_runner_note_failure"));
  if (read == nullptr || json == nullptr || serve == nullptr || fail_fn == nullptr ||
      serve_solution == nullptr || note_failure == nullptr) {
    return 2;
  }
  if (read() != 0) return 2;
  std::fprintf(stderr, "stub: definition %s\n", json());
  if (fail != nullptr) return fail_fn(fail);
  const int code = (solution ? serve_solution : serve)(Add, collect ? Collect : nullptr);
  WriteCounts();
  return code;
}
