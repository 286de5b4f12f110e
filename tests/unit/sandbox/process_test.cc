#include "harness/sandbox/process.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "harness/common/files.h"

namespace kiln {
namespace {

ProcessResult RunShell(const std::string& script, ProcessOptions opts = {}) {
  opts.argv = {"sh", "-c", script};
  absl::StatusOr<ProcessResult> result = RunProcess(opts);
  REQUIRE(result.ok());
  return *result;
}

// A killed process lingers as a zombie until its new parent reaps it; both count as gone.
bool ProcessGone(pid_t pid) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    auto paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z') {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_CASE("a normal exit reports its exit code and captured output") {
  ProcessResult r = RunShell("echo hello; echo oops >&2; exit 3");
  CHECK(r.exit_code == 3);
  CHECK(r.term_signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.cancelled);
  CHECK(r.output == "hello\noops\n");
  CHECK(r.Describe() == "exit code 3");
}

TEST_CASE("stderr stays out of the capture when merge_stderr is off") {
  ProcessOptions opts;
  opts.merge_stderr = false;
  ProcessResult r = RunShell("echo out; echo err-not-captured >&2", opts);
  CHECK(r.exit_code == 0);
  CHECK(r.output == "out\n");
}

TEST_CASE("a death by signal is described with the signal's name") {
  ProcessResult r = RunShell("kill -SEGV $$");
  CHECK(r.term_signal == SIGSEGV);
  CHECK(r.Describe() == "killed by SIGSEGV (Segmentation fault)");
}

TEST_CASE("the timeout kills the whole process group, grandchildren included") {
  ProcessOptions opts;
  opts.timeout_s = 0.5;
  ProcessResult r = RunShell("sleep 100 & echo $!; sleep 100", opts);
  CHECK(r.timed_out);
  CHECK(r.term_signal == SIGKILL);
  CHECK(r.wall_s < 60);  // far below the 100 s the children would sleep
  CHECK(absl::StartsWith(r.Describe(), "timed out after "));
  pid_t grandchild = std::stoi(r.output);
  CHECK(ProcessGone(grandchild));
}

TEST_CASE("what a program leaves running in its group is killed when it exits") {
  ProcessResult r = RunShell("sleep 100 & echo $!");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(ProcessGone(std::stoi(r.output)));
}

TEST_CASE("setting the cancel flag kills the process") {
  std::atomic<bool> cancel{false};
  ProcessOptions opts;
  opts.argv = {"sleep", "100"};
  absl::StatusOr<Process> p = Process::Start(opts);
  REQUIRE(p.ok());
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel = true;
  });
  ProcessResult r = p->Wait(&cancel);
  canceller.join();
  CHECK(r.cancelled);
  CHECK_FALSE(r.timed_out);
  CHECK(r.Describe() == "cancelled");
}

TEST_CASE("captured output beyond the limit is dropped and noted, and the child is not blocked") {
  ProcessOptions opts;
  opts.max_captured_bytes = 1000;
  ProcessResult r = RunShell("head -c 300000 /dev/zero | tr '\\0' x", opts);
  CHECK(r.exit_code == 0);
  REQUIRE(r.output.size() > 1000);
  CHECK(r.output.substr(0, 1000) == std::string(1000, 'x'));
  CHECK(r.output.find("299000 more bytes of output dropped") != std::string::npos);
}

TEST_CASE("a program that does not exist is a NOT_FOUND error naming it") {
  ProcessOptions opts;
  opts.argv = {"/nonexistent/kiln-no-such-program", "x"};
  absl::StatusOr<Process> p = Process::Start(opts);
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == absl::StatusCode::kNotFound);
  CHECK(absl::StrContains(p.status().message(), "/nonexistent/kiln-no-such-program"));

  opts.argv = {"kiln-no-such-program-in-path"};
  p = Process::Start(opts);
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == absl::StatusCode::kNotFound);
  CHECK(absl::StrContains(p.status().message(), "kiln-no-such-program-in-path"));
}

TEST_CASE("an unusable working directory is an error naming it") {
  ProcessOptions opts;
  opts.argv = {"true"};
  opts.cwd = "/nonexistent/kiln-dir";
  absl::StatusOr<ProcessResult> r = RunProcess(opts);
  REQUIRE_FALSE(r.ok());
  CHECK(absl::StrContains(r.status().message(), "/nonexistent/kiln-dir"));
}

TEST_CASE("an empty argv is rejected") {
  absl::StatusOr<ProcessResult> r = RunProcess(ProcessOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("child_fds arrive as fds 3, 4, ... and nothing else leaks") {
  int a[2], b[2];
  REQUIRE(::pipe(a) == 0);  // deliberately without O_CLOEXEC
  REQUIRE(::pipe2(b, O_CLOEXEC) == 0);  // close-on-exec in the parent must not matter
  int stray = ::fcntl(a[0], F_DUPFD, 50);  // inheritable, and not among the child's fds
  REQUIRE(stray >= 50);
  ProcessOptions opts;
  opts.argv = {"sh", "-c",
               "echo first >&3; echo second >&4; "
               "if [ -e /proc/$$/fd/" +
                   std::to_string(stray) +
                   " ]; then echo leaked; fi; "
                   "if [ -e /proc/$$/fd/5 ]; then echo extra; fi"};
  opts.child_fds = {a[1], b[1]};
  absl::StatusOr<Process> p = Process::Start(opts);
  REQUIRE(p.ok());
  ::close(a[1]);
  ::close(b[1]);
  ProcessResult r = p->Wait();
  CHECK(r.exit_code == 0);
  CHECK(r.output == "");
  char buf[64];
  ssize_t n = ::read(a[0], buf, sizeof buf);
  CHECK(std::string(buf, n > 0 ? n : 0) == "first\n");
  n = ::read(b[0], buf, sizeof buf);
  CHECK(std::string(buf, n > 0 ? n : 0) == "second\n");
  ::close(a[0]);
  ::close(b[0]);
  ::close(stray);
}

TEST_CASE("stdin is /dev/null") {
  ProcessResult r = RunShell("cat; echo done");
  CHECK(r.output == "done\n");
}

TEST_CASE("stdout_path receives the output, appended") {
  absl::StatusOr<std::string> dir = MakeTempDir("", "kiln-process-test");
  REQUIRE(dir.ok());
  ProcessOptions opts;
  opts.stdout_path = *dir + "/out.log";
  RunShell("echo one", opts);
  ProcessResult r = RunShell("echo two >&2", opts);
  CHECK(r.output.empty());
  absl::StatusOr<std::string> content = ReadFile(opts.stdout_path);
  REQUIRE(content.ok());
  CHECK(*content == "one\ntwo\n");
  CHECK(RemoveTree(*dir).ok());
}

TEST_CASE("an explicit environment replaces the parent's") {
  ProcessOptions opts;
  opts.env = {"KILN_TEST_VAR=forty-two", "PATH=/usr/bin:/bin"};
  ProcessResult r = RunShell("echo $KILN_TEST_VAR; echo ${HOME:-unset}", opts);
  CHECK(r.output == "forty-two\nunset\n");
}

TEST_CASE("rlimits apply and core dumps are off") {
  ProcessOptions opts;
  opts.max_file_bytes = 1000;
  opts.max_cpu_seconds = 50;
  ProcessResult r = RunShell(
      "ulimit -c; ulimit -t; f=$(mktemp); head -c 5000 /dev/zero > $f; "
      "wc -c < $f; rm -f $f",
      opts);
  CHECK(absl::StartsWith(r.output, "0\n50\n"));
  CHECK(absl::EndsWith(r.output, "\n1000\n"));  // the write stopped at the 1000-byte limit
}

TEST_CASE("a process is killed and reaped when its Process is destroyed") {
  pid_t pid;
  {
    ProcessOptions opts;
    opts.argv = {"sleep", "100"};
    absl::StatusOr<Process> p = Process::Start(opts);
    REQUIRE(p.ok());
    pid = p->pid();
    Process moved = std::move(*p);
    CHECK(moved.pid() == pid);
  }
  CHECK(::kill(pid, 0) == -1);
  CHECK(errno == ESRCH);
}

int OpenFdCount() {
  int count = 0;
  for (int fd = 0; fd < 1024; ++fd) count += ::fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
  return count;
}

TEST_CASE("starting, failing and waiting leave no fds open in the parent") {
  const int before = OpenFdCount();
  for (int i = 0; i < 10; ++i) {
    RunShell("echo hi");
    ProcessOptions bad;
    bad.argv = {"/nonexistent/kiln-program"};
    CHECK_FALSE(RunProcess(bad).ok());
  }
  CHECK(OpenFdCount() == before);
}

TEST_CASE("many threads run processes at once") {
  constexpr int kThreads = 8, kEach = 5;
  std::vector<std::thread> threads;
  std::vector<int> good(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &good] {
      for (int i = 0; i < kEach; ++i) {
        ProcessOptions opts;
        std::string word = std::to_string(t * 100 + i);
        opts.argv = {"echo", word};
        absl::StatusOr<ProcessResult> r = RunProcess(opts);
        if (r.ok() && r->exit_code == 0 && r->output == word + "\n") ++good[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(good[t] == kEach);
}

}  // namespace
}  // namespace kiln
