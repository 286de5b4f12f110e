#include "harness/sandbox/cgroup_limits.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "harness/common/files.h"

namespace kiln {

namespace {

struct Mount {
  std::string root;   // path inside the hierarchy that is mounted
  std::string point;  // where
  std::string type;   // cgroup | cgroup2
  std::string options;
};

std::vector<Mount> CgroupMounts() {
  std::vector<Mount> mounts;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    size_t dash = 0;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 5 || dash + 3 >= f.size()) continue;  // "- TYPE SOURCE OPTIONS"
    const std::string& type = f[dash + 1];
    if (type != "cgroup" && type != "cgroup2") continue;
    mounts.push_back({f[3], f[4], type, f[dash + 3]});
  }
  return mounts;
}

// This process's cgroup in the hierarchy whose /proc/self/cgroup controller list is `key`
// ("" for v2, "memory", "pids"), made relative to `m`'s mounted root.
std::string OwnDir(const std::string& key, const Mount& m) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(absl::string_view(line), absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    std::vector<std::string> controllers = absl::StrSplit(f[1], ',');
    bool match = key.empty() ? f[1].empty() : absl::c_linear_search(controllers, key);
    if (!match) continue;
    std::string path = f[2];
    if (m.root != "/" && absl::StartsWith(path, m.root)) path = path.substr(m.root.size());
    if (path == "/") path.clear();
    return m.point + path;
  }
  return "";
}

std::string Slurp(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  return text.ok() ? *text : "";
}

bool WriteTo(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  ::close(fd);
  return ok;
}

bool HasWords(const std::string& text, std::initializer_list<const char*> words) {
  std::vector<std::string> have = absl::StrSplit(text, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  for (const char* w : words) {
    if (!absl::c_linear_search(have, std::string(w))) return false;
  }
  return true;
}

// A "key N" line of a cgroup's events/stat file.
int64_t Counter(const std::string& file, const std::string& key) {
  std::istringstream in(Slurp(file));
  std::string k;
  int64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

// v2: the parent of job cgroups below `base`, with memory and pids enabled for its children.
std::string PrepareV2(const std::string& base, std::string* why_not) {
  if (!HasWords(Slurp(base + "/cgroup.controllers"), {"memory", "pids"})) {
    *why_not = absl::StrCat("cgroup v2 at ", base, " has no memory and pids controllers");
    return "";
  }
  if (::access((base + "/cgroup.subtree_control").c_str(), W_OK) != 0) {
    *why_not = absl::StrCat("cgroup v2 at ", base, " is not writable (not delegated)");
    return "";
  }
  if (!HasWords(Slurp(base + "/cgroup.subtree_control"), {"memory", "pids"})) {
    // No internal processes: this process leaves `base` for a leaf before enabling controllers.
    const std::string leaf = base + "/kiln-harness";
    ::mkdir(leaf.c_str(), 0755);
    if (!WriteTo(leaf + "/cgroup.procs", "0") ||
        !WriteTo(base + "/cgroup.subtree_control", "+memory +pids")) {
      *why_not = absl::StrCat("cannot enable memory and pids below ", base, ": ",
                              std::strerror(errno));
      return "";
    }
  }
  const std::string jobs = base + "/kiln-jobs";
  ::mkdir(jobs.c_str(), 0755);
  if (!WriteTo(jobs + "/cgroup.subtree_control", "+memory +pids")) {
    *why_not = absl::StrCat("cannot enable memory and pids in ", jobs, ": ", std::strerror(errno));
    return "";
  }
  return jobs;
}

// v1: a writable directory in the hierarchy of `controller`, or "".
std::string PrepareV1(const std::vector<Mount>& mounts, const std::string& controller) {
  for (const Mount& m : mounts) {
    if (m.type != "cgroup" || !HasWords(absl::StrReplaceAll(m.options, {{",", " "}}),
                                        {controller.c_str()})) {
      continue;
    }
    const std::string dir = OwnDir(controller, m);
    const std::string probe = absl::StrCat(dir, "/kiln-probe-", ::getpid());
    if (dir.empty() || ::mkdir(probe.c_str(), 0755) != 0) return "";
    ::rmdir(probe.c_str());
    return dir;
  }
  return "";
}

std::atomic<int64_t> next_job{0};

}  // namespace

CgroupHost CgroupHost::Detect() {
  CgroupHost host;
  std::vector<Mount> mounts = CgroupMounts();
  std::string why_v2 = "no cgroup v2 mount";
  for (const Mount& m : mounts) {
    if (m.type != "cgroup2") continue;
    const std::string base = OwnDir("", m);
    if (base.empty()) continue;
    host.v2_dir_ = PrepareV2(base, &why_v2);
    if (!host.v2_dir_.empty()) return host;
  }
  std::string memory = PrepareV1(mounts, "memory");
  std::string pids = PrepareV1(mounts, "pids");
  if (!memory.empty() && !pids.empty()) {
    host.v1_dirs_ = {memory, pids};
    host.why_not_ = why_v2;
    return host;
  }
  host.why_not_ = absl::StrCat(why_v2, "; no writable cgroup v1 memory and pids hierarchies");
  return host;
}

std::string CgroupHost::Describe() const {
  if (!v2_dir_.empty()) return absl::StrCat("cgroup v2 at ", v2_dir_, " (memory, pids)");
  if (!v1_dirs_.empty()) {
    return absl::StrCat("cgroup v1 memory at ", v1_dirs_[0], ", pids at ", v1_dirs_[1],
                        " (v2 unusable: ", why_not_, ")");
  }
  return absl::StrCat("none: ", why_not_);
}

absl::StatusOr<std::unique_ptr<JobCgroup>> CgroupHost::CreateJob(int64_t memory_bytes,
                                                                 int64_t max_pids) const {
  if (!available()) return absl::FailedPreconditionError(Describe());
  const std::string name = absl::StrCat("kiln-", ::getpid(), "-job-", next_job++);
  const bool v2 = !v2_dir_.empty();
  std::vector<std::string> dirs;
  for (const std::string& parent : v2 ? std::vector<std::string>{v2_dir_} : v1_dirs_) {
    dirs.push_back(parent + "/" + name);
  }
  for (const std::string& dir : dirs) {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(absl::StrCat("cannot create cgroup ", dir, ": ",
                                              std::strerror(errno)));
    }
  }
  auto job = std::make_unique<JobCgroup>(dirs, v2, memory_bytes, max_pids);
  const std::string& mem_dir = dirs[0];
  const std::string& pids_dir = dirs.back();
  bool ok = true;
  if (memory_bytes > 0) {
    ok = ok && WriteTo(mem_dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"),
                       std::to_string(memory_bytes));
    if (v2) WriteTo(mem_dir + "/memory.swap.max", "0");
  }
  if (max_pids > 0) ok = ok && WriteTo(pids_dir + "/pids.max", std::to_string(max_pids));
  if (!ok || job->procs_fds().size() != dirs.size()) {
    return absl::InternalError(absl::StrCat("cannot set the limits of cgroup ", mem_dir, ": ",
                                            std::strerror(errno)));
  }
  return job;
}

JobCgroup::JobCgroup(std::vector<std::string> dirs, bool v2, int64_t memory_bytes,
                     int64_t max_pids)
    : dirs_(std::move(dirs)), v2_(v2), memory_bytes_(memory_bytes), max_pids_(max_pids) {
  for (const std::string& dir : dirs_) {
    int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) procs_fds_.push_back(fd);
  }
}

JobCgroup::~JobCgroup() {
  for (int fd : procs_fds_) ::close(fd);
  for (const std::string& dir : dirs_) {
    // Killed processes leave the cgroup a moment after they die.
    for (int attempt = 0; attempt < 200 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY;
         ++attempt) {
      KillAll();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

void JobCgroup::KillAll() const {
  for (const std::string& dir : dirs_) {
    if (v2_ && WriteTo(dir + "/cgroup.kill", "1")) continue;
    std::istringstream pids(Slurp(dir + "/cgroup.procs"));
    pid_t pid;
    while (pids >> pid) ::kill(pid, SIGKILL);
  }
}

std::string JobCgroup::LimitHit() const {
  const std::string& mem_dir = dirs_[0];
  const std::string& pids_dir = dirs_.back();
  bool oom = v2_ ? Counter(mem_dir + "/memory.events", "oom_kill") > 0
                 : Counter(mem_dir + "/memory.oom_control", "oom_kill") > 0 ||
                       std::atoll(Slurp(mem_dir + "/memory.failcnt").c_str()) > 0;
  if (memory_bytes_ > 0 && oom) {
    return absl::StrCat("memory limit of ", memory_bytes_ >> 20, " MiB reached (OOM kill)");
  }
  if (max_pids_ > 0 && Counter(pids_dir + "/pids.events", "max") > 0) {
    return absl::StrCat("process limit of ", max_pids_, " reached");
  }
  return "";
}

}  // namespace kiln
