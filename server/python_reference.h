// The node's Python reference runner: the python3 whose torch runs definitions' `reference`
// run() functions (harness/worker/python/kiln_reference_runner.py over libkiln_worker_python.so).
// Probed once at start; a node without python3 or torch falls back to native references.
#ifndef KILN_SERVER_PYTHON_REFERENCE_H_
#define KILN_SERVER_PYTHON_REFERENCE_H_

#include <string>
#include <vector>

namespace kiln {

struct PythonReference {
  bool available = false;
  std::string note;        // why not available, or "torch 2.11.0+cu130 (CUDA 13.0), python3.12"
  std::string python;      // the interpreter (absolute)
  std::string runner;      // kiln_reference_runner.py
  std::string core;        // libkiln_worker_python.so
  std::string torch_version;
  std::vector<std::string> sys_path;        // the interpreter's path, passed to the runner
  std::vector<std::string> readable_paths;  // what its sandbox must be able to read
};

// Looks for the runner and the core beside kiln-worker (<bin>/../share/kiln/python,
// <bin>/../lib), resolves `python` ("python3" by default; "none" disables) and asks it, with a
// time limit, whether it imports torch and sees a CUDA device. Never fails: the note says why
// the runner is unavailable.
PythonReference ProbePythonReference(const std::string& python, const std::string& worker_path,
                                     double timeout_s = 120);

}  // namespace kiln

#endif  // KILN_SERVER_PYTHON_REFERENCE_H_
