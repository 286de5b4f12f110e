#include "harness/python/python_reference.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "harness/sandbox/process.h"
#include "harness/sandbox/program_path.h"
#include "nlohmann/json.hpp"

namespace kiln {

namespace {

// Prints one JSON line: the interpreter, its path, and whether torch imports and sees CUDA.
constexpr char kProbe[] = R"PY(
import json, os, sys
out = {"executable": os.path.realpath(sys.executable),
       "version": "python%d.%d" % sys.version_info[:2],
       "sys_path": [p for p in sys.path if p and os.path.isdir(p)],
       "prefixes": sorted({sys.prefix, sys.base_prefix, sys.exec_prefix})}
try:
    import torch
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda or ""
    out["torch_dir"] = os.path.dirname(os.path.dirname(os.path.realpath(torch.__file__)))
    out["cuda"] = bool(torch.cuda.is_available())
except Exception as e:
    out["error"] = "%s: %s" % (type(e).__name__, e)
try:
    import triton
    out["triton"] = triton.__version__
    out["triton_dir"] = os.path.dirname(os.path.dirname(os.path.realpath(triton.__file__)))
except Exception as e:
    out["triton_error"] = "%s: %s" % (type(e).__name__, e)
print("KILN-PROBE " + json.dumps(out))
)PY";

bool IsFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? std::filesystem::path(path).lexically_normal().string() : p.string();
}

}  // namespace

std::string PythonWithTorchHint(const std::string& python, double timeout_s) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    for (absl::string_view d : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      dirs.emplace_back(d);
    }
  }
  dirs.push_back("/usr/local/bin");
  dirs.push_back("/usr/bin");
  std::set<std::string> seen;
  if (!python.empty()) {
    std::error_code ec;
    seen.insert(std::filesystem::absolute(python, ec).lexically_normal().string());
  }
  int tried = 0;
  for (const std::string& dir : dirs) {
    for (const char* name : {"python3", "python3.13", "python3.12", "python3.11", "python3.10",
                             "python3.9"}) {
      std::error_code ec;
      const std::string candidate =
          std::filesystem::absolute(std::filesystem::path(dir) / name, ec)
              .lexically_normal()
              .string();
      if (ec || !seen.insert(candidate).second || !IsFile(candidate) ||
          access(candidate.c_str(), X_OK) != 0) {
        continue;
      }
      if (++tried > 8) break;
      ProcessOptions opts;
      opts.argv = {candidate, "-c", "import torch; print('KILN-TORCH ' + torch.__version__)"};
      opts.timeout_s = timeout_s;
      opts.merge_stderr = true;
      absl::StatusOr<ProcessResult> run = RunProcess(opts);
      if (!run.ok() || run->timed_out) continue;
      const size_t at = run->output.rfind("KILN-TORCH ");
      if (at == std::string::npos) continue;
      std::string version = run->output.substr(at + 11);
      version = version.substr(0, version.find('\n'));
      return absl::StrCat("pass --python PATH naming a python3 that imports torch: ", candidate,
                          " does (torch ", version, ")");
    }
  }
  return "pass --python PATH naming a python3 that imports torch (no python3 on this machine's "
         "PATH imports it; on Debian: apt-get install python3-torch)";
}

namespace {

PythonReference Probe(const std::string& python, const std::string& worker_path,
                      double timeout_s) {
  PythonReference out;
  if (python.empty() || python == "none") {
    out.note = "disabled (--python none)";
    return out;
  }
  const std::string bin = std::filesystem::path(worker_path).parent_path().string();
  out.runner = Canonical(bin + "/../share/kiln/python/kiln_python_runner.py");
  out.core = Canonical(bin + "/../lib/libkiln_worker_python.so");
  if (!IsFile(out.runner) || !IsFile(out.core)) {
    out.note = absl::StrCat("kiln's Python runner is not installed beside kiln-worker (",
                            out.runner, ", ", out.core, ")");
    return out;
  }
  absl::StatusOr<std::string> resolved = FindProgram(python);
  if (!resolved.ok()) {
    out.note = absl::StrCat(resolved.status().message(), "; ", PythonWithTorchHint(python));
    out.solutions_note = out.note;
    return out;
  }
  // Absolute but not resolved: a virtual environment's python3 is a symlink whose own path is
  // what makes it that environment's interpreter.
  out.python = std::filesystem::absolute(*resolved).lexically_normal().string();
  ProcessOptions opts;
  opts.argv = {out.python, "-c", kProbe};
  opts.timeout_s = timeout_s;
  opts.merge_stderr = true;
  absl::StatusOr<ProcessResult> run = RunProcess(opts);
  if (!run.ok()) {
    out.note = absl::StrCat(out.python, ": ", run.status().message(), "; ",
                            PythonWithTorchHint(out.python));
    out.solutions_note = out.note;
    return out;
  }
  const std::string& text = run->output;
  const size_t at = text.rfind("KILN-PROBE ");
  if (at == std::string::npos || run->timed_out) {
    out.note = absl::StrCat(out.python, " ", run->Describe(), ": ",
                            text.substr(0, std::min<size_t>(text.size(), 300)));
    out.solutions_note = out.note;
    return out;
  }
  std::string line = text.substr(at + 11);
  line = line.substr(0, line.find('\n'));
  nlohmann::json probe = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!probe.is_object()) {
    out.note = absl::StrCat(out.python, ": unreadable probe output");
    return out;
  }
  const std::string version = probe.value("version", "");
  out.python_version = version;
  if (probe.contains("error")) {
    out.note = absl::StrCat(out.python, " (", version, ") cannot import torch: ",
                            probe.value("error", ""), "; ", PythonWithTorchHint(out.python));
    out.solutions_note = out.note;
    return out;
  }
  out.torch = true;
  out.torch_version = probe.value("torch", "");
  out.cuda = probe.value("cuda", false);
  out.triton_version = probe.value("triton", "");
  out.triton_note = probe.value("triton_error", "");
  std::set<std::string> readable;
  const nlohmann::json sys_path = probe.value("sys_path", nlohmann::json::array());
  for (const nlohmann::json& p : sys_path) {
    if (!p.is_string()) continue;
    out.sys_path.push_back(p.get<std::string>());
    readable.insert(Canonical(p.get<std::string>()));
  }
  const nlohmann::json prefixes = probe.value("prefixes", nlohmann::json::array());
  for (const nlohmann::json& p : prefixes) {
    if (p.is_string()) readable.insert(Canonical(p.get<std::string>()));
  }
  readable.insert(probe.value("torch_dir", std::string()));
  readable.insert(probe.value("triton_dir", std::string()));
  readable.insert(std::filesystem::path(out.python).parent_path().string());
  readable.insert(probe.value("executable", std::string()));
  readable.insert(std::filesystem::path(out.runner).parent_path().string());
  readable.insert(std::filesystem::path(out.core).parent_path().string());
  readable.erase("");
  out.readable_paths.assign(readable.begin(), readable.end());
  if (!out.cuda) {
    out.note = absl::StrCat(out.python, ": torch ", out.torch_version, " sees no CUDA device");
    return out;
  }
  out.available = true;
  out.note = absl::StrCat("torch ", out.torch_version, " (CUDA ", probe.value("torch_cuda", ""),
                          "), ", version, " at ", out.python);
  return out;
}

}  // namespace

PythonReference ProbePythonReference(const std::string& python, const std::string& worker_path,
                                     double timeout_s) {
  PythonReference out = Probe(python, worker_path, timeout_s);
  // Why Python solutions cannot run, wherever the probe stopped (never an empty reason).
  if (!out.torch && out.solutions_note.empty()) out.solutions_note = out.note;
  return out;
}

std::string PythonSolutionRuntime(const PythonReference& python) {
  if (!python.torch) return "";
  return absl::StrCat(python.python_version, " at ", python.python, ", torch ",
                      python.torch_version, python.cuda ? " (CUDA)" : " (CPU)", ", triton ",
                      python.triton_version.empty() ? "unavailable" : python.triton_version);
}

std::string PythonLanguageUnavailable(const PythonReference& python, const std::string& language,
                                      const std::string& backend) {
  if (backend != "host" && backend != "cuda") {
    return absl::StrCat("the Python runner drives the host and cuda backends, not '", backend,
                        "'");
  }
  if (!python.torch) {
    return absl::StrCat("this node's Python cannot run solutions: ",
                        python.solutions_note.empty() ? python.note : python.solutions_note);
  }
  if (backend == "cuda" && !python.cuda) {
    return absl::StrCat(python.python, ": torch ", python.torch_version, " sees no CUDA device");
  }
  if (language == "triton") {
    if (backend == "host") return "Triton kernels need a GPU: the host backend cannot run them";
    if (python.triton_version.empty()) {
      return absl::StrCat(python.python, " cannot import triton: ", python.triton_note);
    }
  }
  return "";
}

PythonRuntime::PythonRuntime(PythonReference probed) : result_(std::move(probed)), probed_(true) {}

PythonRuntime::~PythonRuntime() {
  if (thread_.joinable()) thread_.join();
}

void PythonRuntime::Start(const std::string& python, const std::string& worker_path,
                          std::function<void(const PythonReference&)> done) {
  thread_ = std::thread([this, python, worker_path, done = std::move(done)] {
    PythonReference result = ProbePythonReference(python, worker_path);
    if (done) done(result);
    std::lock_guard<std::mutex> lock(mu_);
    result_ = std::move(result);
    probed_ = true;
    probed_cv_.notify_all();
  });
}

const PythonReference& PythonRuntime::Get() const {
  std::unique_lock<std::mutex> lock(mu_);
  probed_cv_.wait(lock, [this] { return probed_; });
  return result_;
}

}  // namespace kiln
