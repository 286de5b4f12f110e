#include "harness/sandbox/sandbox_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln {

namespace {

// Host paths that make up the toolchain: bound read-only (or recreated as the same symlink).
constexpr const char* kSystemPaths[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                        "/libx32"};
// What the dynamic loader, compilers and GPU runtimes read from /etc; nothing else of it.
constexpr const char* kEtcPaths[] = {"/etc/ld.so.cache",      "/etc/ld.so.conf",
                                     "/etc/ld.so.conf.d",     "/etc/alternatives",
                                     "/etc/OpenCL",           "/etc/nvidia"};
constexpr const char* kKeptVariables[] = {"PATH=", "LD_LIBRARY_PATH=", "LANG=", "LANGUAGE=",
                                          "TZ=",   "TMPDIR=",          "TERM="};
constexpr const char* kKeptPrefixes[] = {"LC_", "CUDA_", "NVIDIA_", "ZE_", "KILN_WORKER_"};

bool IsSymlink(const std::string& path, std::string* target) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return false;
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return false;
  target->assign(buf, static_cast<size_t>(n));
  return true;
}

void Add(std::vector<std::string>& argv, std::initializer_list<std::string> args) {
  argv.insert(argv.end(), args.begin(), args.end());
}

// A system path: the same symlink when it is one on the host (merged /usr), else a read-only
// bind.
void AddSystemPath(std::vector<std::string>& argv, const std::string& path) {
  std::string target;
  if (IsSymlink(path, &target)) {
    Add(argv, {"--symlink", target, path});
  } else if (PathExists(path)) {
    Add(argv, {"--ro-bind", path, path});
  }
}

bool Under(const std::string& path, const std::vector<std::string>& folders) {
  for (const std::string& f : folders) {
    if (path == f || absl::StartsWith(path, absl::StrCat(f, "/"))) return true;
  }
  return false;
}

// A read-only path of the policy. Binding a path that is already visible (under /usr, say) is
// redundant, and binding onto a symlink inside a read-only bind fails (a CUDA toolkit installed
// as a "cuda" symlink to "cuda-13.0"): bind the real folder once, and recreate the symlink when its
// own location is not visible yet.
void AddReadOnlyPath(std::vector<std::string>& argv, std::vector<std::string>& bound,
                     const std::string& path) {
  char real[PATH_MAX];
  if (path.empty() || ::realpath(path.c_str(), real) == nullptr) return;
  const std::string canonical = real;
  if (!Under(canonical, bound)) {
    Add(argv, {"--ro-bind", canonical, canonical});
    bound.push_back(canonical);
  }
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  std::string target;
  // Only a path that is itself a symlink is recreated ("bin/../include" is just the real path).
  if (normal == canonical || !IsSymlink(normal, &target)) return;
  // The symlink is visible already when the folder holding it is.
  const std::string parent = normal.substr(0, normal.find_last_of('/'));
  if (!parent.empty() && ::realpath(parent.c_str(), real) != nullptr && Under(real, bound)) return;
  Add(argv, {"--symlink", canonical, normal});
}

}  // namespace

bool PathExists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

std::string PrivateDevParent(const std::string& writable_dir) {
  if (writable_dir.rfind("/dev/", 0) != 0) return "";
  std::vector<std::string> parts = absl::StrSplit(writable_dir, '/', absl::SkipEmpty());
  // /dev, the file system's folder (shm), the scratch folder, at least one folder below it.
  if (parts.size() < 4) return "";
  for (const std::string& part : parts) {
    if (part == "." || part == "..") return "";
  }
  return absl::StrCat("/", parts[0], "/", parts[1], "/", parts[2]);
}

std::vector<std::string> BwrapArgv(const SandboxPolicy& policy,
                                   const std::vector<std::string>& command, const std::string& cwd,
                                   int seccomp_fd) {
  std::vector<std::string> argv = {policy.bwrap};
  // --unshare-user explicitly: bwrap run by root would otherwise keep every capability.
  Add(argv, {"--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL",
             "--die-with-parent", "--new-session", "--hostname", "kiln-sandbox"});
  Add(argv, {"--tmpfs", "/"});
  // /tmp first: every folder bound below it (a bundle, a job folder under the host's /tmp)
  // stays visible at its path.
  if (!policy.tmp_dir.empty()) Add(argv, {"--bind", policy.tmp_dir, "/tmp"});
  for (const char* path : kSystemPaths) AddSystemPath(argv, path);
  for (const char* path : kEtcPaths) {
    if (PathExists(path)) Add(argv, {"--ro-bind", path, path});
  }
  Add(argv, {"--ro-bind", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev"});
  std::vector<std::string> bound;  // real folders visible inside so far
  for (const char* path : kSystemPaths) {
    std::string target;
    if (!IsSymlink(path, &target) && PathExists(path)) bound.push_back(path);
  }
  for (const std::string& path : policy.readonly_paths) AddReadOnlyPath(argv, bound, path);
  for (const std::string& device : policy.devices) {
    if (PathExists(device)) Add(argv, {"--dev-bind", device, device});
  }
  // A job folder in a RAM-backed scratch folder (/dev/shm/kiln-jobs-X/jobs/RUN/cand) lies in
  // the sandbox's own /dev, a writable tmpfs: the folders between /dev/shm/kiln-jobs-X and it
  // are an empty tmpfs of their own, remounted read-only below.
  const std::string private_parent = PrivateDevParent(policy.writable_dir);
  if (!private_parent.empty()) Add(argv, {"--tmpfs", private_parent});
  if (!policy.writable_dir.empty()) {
    Add(argv, {"--bind", policy.writable_dir, policy.writable_dir});
  }
  // Read-only remounts of the root tmpfs last: nothing outside the job's folder is writable.
  if (!private_parent.empty()) Add(argv, {"--remount-ro", private_parent});
  Add(argv, {"--remount-ro", "/"});
  if (!cwd.empty()) Add(argv, {"--chdir", cwd});
  if (policy.seccomp_program != nullptr && !policy.seccomp_program->empty()) {
    Add(argv, {"--seccomp", std::to_string(seccomp_fd)});
  }
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> SandboxEnvironment(const std::vector<std::string>& env,
                                            const std::string& writable_dir) {
  std::vector<std::string> out;
  bool tmpdir_inside = false;
  for (const std::string& kv : env) {
    bool keep = false;
    for (const char* name : kKeptVariables) keep = keep || absl::StartsWith(kv, name);
    for (const char* prefix : kKeptPrefixes) keep = keep || absl::StartsWith(kv, prefix);
    if (!keep) continue;
    if (absl::StartsWith(kv, "TMPDIR=")) {
      if (writable_dir.empty() || !absl::StartsWith(kv.substr(7), writable_dir)) continue;
      tmpdir_inside = true;
    }
    out.push_back(kv);
  }
  const std::string home = writable_dir.empty() ? "/tmp" : writable_dir;
  out.push_back(absl::StrCat("HOME=", home));
  if (!tmpdir_inside) out.push_back(absl::StrCat("TMPDIR=", home));
  return out;
}

std::vector<std::string> GpuDeviceNodePaths(const std::string& backend, int index) {
  if (index < 0) return {};
  if (backend == "cuda") {
    return {absl::StrCat("/dev/nvidia", index), "/dev/nvidiactl", "/dev/nvidia-uvm",
            "/dev/nvidia-uvm-tools"};
  }
  if (backend == "level_zero") return {absl::StrCat("/dev/dri/renderD", 128 + index)};
  return {};
}

std::vector<std::string> GpuDeviceNodes(const std::string& backend, int index) {
  std::vector<std::string> present;
  for (std::string& node : GpuDeviceNodePaths(backend, index)) {
    if (PathExists(node)) present.push_back(std::move(node));
  }
  return present;
}

}  // namespace kiln
