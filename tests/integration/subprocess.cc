#include "tests/integration/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "harness/common/files.h"

namespace kiln::testing {

namespace {

// Children this process started itself; KillOrphans() leaves them alone. Tests start and reap
// children from several threads at once (fleet_test's clients): every use holds the lock.
std::set<pid_t>& StartedPids() {
  static std::set<pid_t>* pids = new std::set<pid_t>;
  return *pids;
}
std::mutex& StartedPidsMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
void NoteStarted(pid_t pid) {
  std::lock_guard<std::mutex> lock(StartedPidsMutex());
  StartedPids().insert(pid);
}
void NoteReaped(pid_t pid) {
  std::lock_guard<std::mutex> lock(StartedPidsMutex());
  StartedPids().erase(pid);
}
bool StartedHere(pid_t pid) {
  std::lock_guard<std::mutex> lock(StartedPidsMutex());
  return StartedPids().count(pid) > 0;
}

}  // namespace

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Completed::Describe() const {
  std::ostringstream os;
  if (timed_out) os << "timed out; ";
  if (term_signal != 0) {
    os << "killed by signal " << term_signal;
  } else {
    os << "exit " << exit_code;
  }
  os << "\n--- stdout ---\n" << out << "\n--- stderr ---\n" << err;
  return os.str();
}

Child Child::Start(const std::vector<std::string>& argv, const std::string& out_path,
                   const std::string& err_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Child child;
  child.out_path_ = out_path;
  child.err_path_ = err_path;
  child.start_s_ = NowSeconds();
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so a signal right after Start reaches it
  child.pid_ = pid;
  NoteStarted(pid);
  return child;
}

Child::Child(Child&& other) noexcept { *this = std::move(other); }

Child& Child::operator=(Child&& other) noexcept {
  std::swap(pid_, other.pid_);
  std::swap(reaped_, other.reaped_);
  std::swap(status_, other.status_);
  std::swap(start_s_, other.start_s_);
  std::swap(out_path_, other.out_path_);
  std::swap(err_path_, other.err_path_);
  return *this;
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
    MarkReaped();
  }
}

void Child::MarkReaped() {
  reaped_ = true;
  NoteReaped(pid_);
}

bool Child::running() {
  if (pid_ <= 0 || reaped_) return false;
  if (::waitpid(pid_, &status_, WNOHANG) == pid_) MarkReaped();
  return !reaped_;
}

void Child::Signal(int sig) {
  if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
}

Completed Child::Wait(double timeout_s) {
  Completed c;
  double deadline = start_s_ + timeout_s;
  while (running()) {
    if (NowSeconds() > deadline) {
      c.timed_out = true;
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      MarkReaped();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  c.wall_s = NowSeconds() - start_s_;
  if (WIFEXITED(status_)) c.exit_code = WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) c.term_signal = WTERMSIG(status_);
  c.out = ReadOut();
  c.err = ReadErr();
  return c;
}

std::string Child::ReadOut() const { return Slurp(out_path_); }
std::string Child::ReadErr() const { return Slurp(err_path_); }

Completed Run(const std::vector<std::string>& argv, double timeout_s) {
  ScratchDir dir;
  Child child = Child::Start(argv, dir / "stdout", dir / "stderr");
  return child.Wait(timeout_s);
}

ScratchDir::ScratchDir() {
  absl::StatusOr<std::string> p = MakeTempDir("", "kiln-itest");
  REQUIRE(p.ok());
  path_ = *p;
}

ScratchDir::~ScratchDir() { (void)RemoveTree(path_); }

void AdoptOrphans() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

namespace {

// (pid, command name) of every process whose parent is this one; zombies (already dead, not yet
// reaped) only when `include_zombies`.
std::vector<std::pair<pid_t, std::string>> ChildrenOfThisProcess(bool include_zombies) {
  std::vector<std::pair<pid_t, std::string>> out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  const pid_t self = ::getpid();
  while (dirent* e = ::readdir(proc)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string stat = Slurp("/proc/" + std::string(e->d_name) + "/stat");
    // pid (comm) state ppid ...; comm may hold spaces, so parse from the last ')'.
    size_t close = stat.rfind(')');
    size_t open = stat.find('(');
    if (close == std::string::npos || open == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != self || (state == 'Z' && !include_zombies)) continue;
    out.emplace_back(pid, stat.substr(open + 1, close - open - 1));
  }
  ::closedir(proc);
  return out;
}

}  // namespace

std::vector<std::string> LiveOrphans(double wait_s) {
  double deadline = NowSeconds() + wait_s;
  for (;;) {
    std::vector<std::string> names;
    for (const auto& [pid, name] : ChildrenOfThisProcess(/*include_zombies=*/false)) {
      if (!StartedHere(pid)) names.push_back(name);
    }
    if (names.empty() || NowSeconds() >= deadline) return names;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<std::string> KillOrphans() {
  std::vector<std::string> names;
  // Killing an orphan hands its own children to this process; sweep until none is left.
  for (int round = 0; round < 10; ++round) {
    bool found = false;
    for (const auto& [pid, name] : ChildrenOfThisProcess(/*include_zombies=*/true)) {
      if (StartedHere(pid)) continue;
      found = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      int status = 0;
      ::waitpid(pid, &status, 0);
      names.push_back(name);
    }
    if (!found) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return names;
}

std::string WaitForListening(Child& child, const std::string& program) {
  const std::regex listening(program + " listening on (\\S+)");
  const double deadline = NowSeconds() + 60;
  for (;;) {
    std::smatch m;
    const std::string out = child.ReadOut();
    if (std::regex_search(out, m, listening)) return m[1];
    if (!child.running() || NowSeconds() > deadline) {
      FAIL(program << " did not come up:\n" << child.ReadErr());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace kiln::testing
