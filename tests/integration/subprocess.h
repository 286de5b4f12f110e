// Child processes for the integration tests: run a program to completion capturing stdout and
// stderr separately, or start one in the background and signal it later. Every child gets its
// own process group, so a kill reaches what it started.
#ifndef KILN_TESTS_INTEGRATION_SUBPROCESS_H_
#define KILN_TESTS_INTEGRATION_SUBPROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace kiln::testing {

struct Completed {
  int exit_code = -1;   // -1 when killed by a signal
  int term_signal = 0;  // the signal that ended it, 0 if it exited
  bool timed_out = false;
  double wall_s = 0;
  std::string out;
  std::string err;
  // "exit 1", stdout and stderr, for failure messages.
  std::string Describe() const;
};

// A started child whose stdout and stderr go to files.
class Child {
 public:
  // Starts argv[0] with the given arguments; stdout and stderr go to `out_path` and `err_path`,
  // stdin is /dev/null. Fails the current test when the fork fails.
  static Child Start(const std::vector<std::string>& argv, const std::string& out_path,
                     const std::string& err_path);
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  // Kills the process group of a child still running.
  ~Child();

  pid_t pid() const { return pid_; }
  bool running();  // reaps the child when it has exited
  void Signal(int sig);
  // Waits at most `timeout_s`; on expiry the process group is killed and timed_out set.
  Completed Wait(double timeout_s);
  std::string ReadOut() const;
  std::string ReadErr() const;

 private:
  Child() = default;
  void MarkReaped();
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  double start_s_ = 0;
  std::string out_path_, err_path_;
};

// Runs argv to completion (killed after `timeout_s`) and returns its output.
Completed Run(const std::vector<std::string>& argv, double timeout_s = 120);

// Seconds on a monotonic clock.
double NowSeconds();

// Waits until `child` prints "<program> listening on HOST:PORT" on stdout and returns HOST:PORT;
// fails the test (with its stderr) when it exits or 60 s pass first.
std::string WaitForListening(Child& child, const std::string& program);

// Reads a whole file; empty when it cannot be read.
std::string Slurp(const std::string& path);

// A fresh folder under $TMPDIR, removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Makes this process adopt orphaned descendants (PR_SET_CHILD_SUBREAPER), so that workers left
// behind by a killed harness can be found and ended by KillOrphans().
void AdoptOrphans();
// Kills and reaps the children of this process that it did not start itself (adopted orphans);
// returns their command names.
std::vector<std::string> KillOrphans();
// Names of adopted processes still running (not zombies), after waiting up to `wait_s` for them
// to end by themselves.
std::vector<std::string> LiveOrphans(double wait_s);

}  // namespace kiln::testing

#endif  // KILN_TESTS_INTEGRATION_SUBPROCESS_H_
