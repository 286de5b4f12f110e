// A real kiln-harness process for the integration tests, and the real kiln CLI pointed at it.
//
//   HarnessInstance harness(data_dir);     // starts it, waits for "listening on HOST:PORT"
//   Completed r = harness.Kiln({"runs", "list"});
#ifndef KILN_TESTS_INTEGRATION_HARNESS_INSTANCE_H_
#define KILN_TESTS_INTEGRATION_HARNESS_INSTANCE_H_

#include <optional>
#include <string>
#include <vector>

#include "tests/integration/subprocess.h"

namespace kiln::testing {

// Paths of the binaries under test and of the test data.
std::string KilnBinary();
std::string HarnessBinary();
std::string DataPath(const std::string& rel);  // tests/integration/data/<rel>

// Worker wall-clock limit the tests run the harness with; the endless-loop solution hits it.
inline constexpr double kWorkerTimeoutS = 5;

// A CA (ca.pem), a server certificate for localhost and 127.0.0.1 (server.pem, server.key) and
// a client certificate (client.pem, client.key) signed by it, made in `dir` by the openssl
// command line. Fails the current test when they cannot be made.
void MakeTestCertificates(const ScratchDir& dir);

// Runs the kiln CLI with `args` (global flags included by the caller).
Completed Kiln(const std::vector<std::string>& args, double timeout_s = 180);

class HarnessInstance {
 public:
  // Starts kiln-harness --listen 127.0.0.1:0 --data-dir `data_dir` --quiet
  // --worker-timeout-s 5 and waits for its "kiln-harness listening on HOST:PORT" line.
  // Fails the current test when it does not come up.
  explicit HarnessInstance(std::string data_dir);
  // The same, with `extra_flags` appended to kiln-harness's command line (later flags win).
  HarnessInstance(std::string data_dir, const std::vector<std::string>& extra_flags);
  ~HarnessInstance();

  const std::string& address() const { return address_; }
  const std::string& data_dir() const { return data_dir_; }
  pid_t pid() const { return child_->pid(); }

  // kiln --server <address> args...
  Completed Kiln(const std::vector<std::string>& args, double timeout_s = 180) const;

  // SIGTERM, then waits for the exit (SIGKILL after `timeout_s`).
  Completed Terminate(double timeout_s = 60);
  // SIGKILL, no grace.
  Completed Kill();
  std::string log() const;

 private:
  std::string data_dir_;
  ScratchDir logs_;
  std::optional<Child> child_;
  std::string address_;
};

// A harness shared by the tests that need no restart, with scale_add_f32 and its workloads
// registered. Started on first use; stopped when the test binary exits.
HarnessInstance& SharedHarness();

// The run id in `kiln submit`'s "kiln: run ID admitted" line, or "".
std::string AdmittedRunId(const std::string& err);

// The number of runs the harness has archived (kiln runs list --json --limit 1000).
// Runs submitted to the harness (its reference checks of added definitions left out).
int CountRuns(const HarnessInstance& harness);

}  // namespace kiln::testing

#endif  // KILN_TESTS_INTEGRATION_HARNESS_INSTANCE_H_
