// The node's Python: the python3 whose torch runs definitions' `reference` run() functions and
// Python/Triton solutions (harness/worker/python/kiln_python_runner.py over
// libkiln_worker_python.so). Probed once at start, in the background (importing torch takes
// seconds); a node without python3 or torch falls back to native references and refuses Python
// solutions with the reason.
#ifndef KILN_HARNESS_PYTHON_PYTHON_REFERENCE_H_
#define KILN_HARNESS_PYTHON_PYTHON_REFERENCE_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln {

struct PythonReference {
  bool available = false;  // references can run: torch imports and sees a CUDA device
  std::string note;        // why not available, or "torch 2.11.0+cu130 (CUDA 13.0), python3.12"
  std::string python;      // the interpreter (absolute)
  std::string runner;      // kiln_python_runner.py
  std::string core;        // libkiln_worker_python.so
  std::string torch_version;
  std::vector<std::string> sys_path;        // the interpreter's path, passed to the runner
  std::vector<std::string> readable_paths;  // what its sandbox must be able to read
  // Python solutions: torch imports (a CUDA device is needed on the cuda backend only).
  bool torch = false;
  bool cuda = false;              // torch sees a CUDA device
  std::string python_version;     // "python3.12"
  std::string triton_version;     // "" when triton does not import
  std::string triton_note;        // why triton does not import
  std::string solutions_note;     // why Python solutions cannot run ("" when they can)
};

// Looks for the runner and the core beside kiln-worker (<bin>/../share/kiln/python,
// <bin>/../lib), resolves `python` ("python3" by default; "none" disables) and asks it, with a
// time limit, whether it imports torch (and triton) and sees a CUDA device. Never fails: the
// notes say why the runner is unavailable.
PythonReference ProbePythonReference(const std::string& python, const std::string& worker_path,
                                     double timeout_s = 120);

// For a `python` that cannot run kiln's Python paths: "pass --python PATH naming a python3 that
// imports torch: /usr/bin/python3 does (torch 1.13.0)", the first other python3 on PATH (and in
// /usr/local/bin, /usr/bin) whose torch imports, or a line saying none does. Runs each candidate
// (at most 8, `timeout_s` each).
std::string PythonWithTorchHint(const std::string& python, double timeout_s = 60);

// "python3.12 at /usr/bin/python3, torch 2.11.0, triton 3.6.0": what Python solutions run with
// (the Python toolchain's version, part of its cache key).
std::string PythonSolutionRuntime(const PythonReference& python);

// Why `language` ("python" or "triton") cannot run on backend `backend` with `python` ("" when
// it can).
std::string PythonLanguageUnavailable(const PythonReference& python, const std::string& language,
                                      const std::string& backend);

// The probe, run once on a thread of its own; Get() waits for it. Thread-safe.
class PythonRuntime {
 public:
  PythonRuntime() = default;
  // Already probed (tests; a node that does not probe).
  explicit PythonRuntime(PythonReference probed);
  ~PythonRuntime();
  PythonRuntime(const PythonRuntime&) = delete;
  PythonRuntime& operator=(const PythonRuntime&) = delete;

  // Starts ProbePythonReference(python, worker_path) in the background; `done` (optional) is
  // called on that thread with the result.
  void Start(const std::string& python, const std::string& worker_path,
             std::function<void(const PythonReference&)> done = nullptr);
  // The probe's result, waiting for it.
  const PythonReference& Get() const;

 private:
  PythonReference result_;
  mutable std::mutex mu_;
  mutable std::condition_variable probed_cv_;
  bool probed_ = false;
  std::thread thread_;
};

}  // namespace kiln

#endif  // KILN_HARNESS_PYTHON_PYTHON_REFERENCE_H_
