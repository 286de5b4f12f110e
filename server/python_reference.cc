#include "server/python_reference.h"

#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
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

PythonReference ProbePythonReference(const std::string& python, const std::string& worker_path,
                                     double timeout_s) {
  PythonReference out;
  if (python.empty() || python == "none") {
    out.note = "disabled (--python none)";
    return out;
  }
  const std::string bin = std::filesystem::path(worker_path).parent_path().string();
  out.runner = Canonical(bin + "/../share/kiln/python/kiln_reference_runner.py");
  out.core = Canonical(bin + "/../lib/libkiln_worker_python.so");
  if (!IsFile(out.runner) || !IsFile(out.core)) {
    out.note = absl::StrCat("kiln's Python runner is not installed beside kiln-worker (",
                            out.runner, ", ", out.core, ")");
    return out;
  }
  absl::StatusOr<std::string> resolved = FindProgram(python);
  if (!resolved.ok()) {
    out.note = std::string(resolved.status().message());
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
    out.note = absl::StrCat(out.python, ": ", run.status().message());
    return out;
  }
  const std::string& text = run->output;
  const size_t at = text.rfind("KILN-PROBE ");
  if (at == std::string::npos || run->timed_out) {
    out.note = absl::StrCat(out.python, " ", run->Describe(), ": ",
                            text.substr(0, std::min<size_t>(text.size(), 300)));
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
  if (probe.contains("error")) {
    out.note = absl::StrCat(out.python, " (", version, ") cannot import torch: ",
                            probe.value("error", ""));
    return out;
  }
  out.torch_version = probe.value("torch", "");
  if (!probe.value("cuda", false)) {
    out.note = absl::StrCat(out.python, ": torch ", out.torch_version, " sees no CUDA device");
    return out;
  }
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
  readable.insert(std::filesystem::path(out.python).parent_path().string());
  readable.insert(probe.value("executable", std::string()));
  readable.insert(std::filesystem::path(out.runner).parent_path().string());
  readable.insert(std::filesystem::path(out.core).parent_path().string());
  readable.erase("");
  out.readable_paths.assign(readable.begin(), readable.end());
  out.available = true;
  out.note = absl::StrCat("torch ", out.torch_version, " (CUDA ", probe.value("torch_cuda", ""),
                          "), ", version, " at ", out.python);
  return out;
}

}  // namespace kiln
