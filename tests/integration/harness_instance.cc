#include "tests/integration/harness_instance.h"

#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <regex>
#include <thread>

namespace kiln::testing {

std::string KilnBinary() { return std::string(KILN_BINARY_DIR) + "/bin/kiln"; }
std::string HarnessBinary() { return std::string(KILN_BINARY_DIR) + "/bin/kiln-harness"; }
std::string DataPath(const std::string& rel) {
  return std::string(KILN_SOURCE_DIR) + "/tests/integration/data/" + rel;
}

void MakeTestCertificates(const ScratchDir& dir) {
  const std::string script =
      "set -e; cd '" + dir.path() +
      "'; k='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';"
      "openssl req -x509 $k -keyout ca.key -out ca.pem -days 2 -subj /CN=kiln-test-ca;"
      "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext;"
      "for n in server client; do "
      "openssl req $k -keyout $n.key -out $n.csr -subj /CN=$n;"
      "openssl x509 -req -in $n.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
      "-extfile san.ext -out $n.pem; done";
  Completed made = Run({"/bin/sh", "-c", script}, 120);
  INFO(made.Describe());
  REQUIRE(made.exit_code == 0);
}

Completed Kiln(const std::vector<std::string>& args, double timeout_s) {
  std::vector<std::string> argv{KilnBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, timeout_s);
}

HarnessInstance::HarnessInstance(std::string data_dir)
    : HarnessInstance(std::move(data_dir), std::vector<std::string>()) {}

HarnessInstance::HarnessInstance(std::string data_dir, const std::vector<std::string>& extra_flags)
    : data_dir_(std::move(data_dir)) {
  std::vector<std::string> argv{HarnessBinary(), "--listen",   "127.0.0.1:0",
                                "--data-dir",    data_dir_,    "--quiet",
                                "--worker-timeout-s", std::to_string(kWorkerTimeoutS),
                                // Official-mode timings stay well inside the 5 s worker limit
                                // on machines that report a very large L3 (a VM showing its
                                // host's): the flush is recorded, the protocol unchanged.
                                "--host-flush-mb", "16"};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  child_.emplace(Child::Start(argv, logs_ / "stdout", logs_ / "stderr"));
  address_ = WaitForListening(*child_, "kiln-harness");
}

HarnessInstance::~HarnessInstance() {
  if (child_ && child_->running()) Terminate(30);
}

Completed HarnessInstance::Kiln(const std::vector<std::string>& args, double timeout_s) const {
  std::vector<std::string> all{"--server", address_};
  all.insert(all.end(), args.begin(), args.end());
  return testing::Kiln(all, timeout_s);
}

Completed HarnessInstance::Terminate(double timeout_s) {
  child_->Signal(SIGTERM);
  // Wait() measures from the start of the process; allow `timeout_s` from now.
  double deadline = NowSeconds() + timeout_s;
  while (child_->running() && NowSeconds() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return child_->Wait(0);
}

Completed HarnessInstance::Kill() {
  child_->Signal(SIGKILL);
  return child_->Wait(1e9);
}

std::string HarnessInstance::log() const {
  return "--- kiln-harness stdout ---\n" + child_->ReadOut() + "\n--- kiln-harness stderr ---\n" +
         child_->ReadErr();
}

namespace {

struct Shared {
  ScratchDir dir;
  HarnessInstance harness{dir / "data"};
};

}  // namespace

HarnessInstance& SharedHarness() {
  // Destroyed when the binary exits, which stops the harness and removes its data.
  static std::unique_ptr<Shared> shared;
  if (!shared) {
    shared = std::make_unique<Shared>();
    Completed added = shared->harness.Kiln({"defs", "add", DataPath("scale_add_f32.json"),
                                            "--workloads", DataPath("scale_add_f32.jsonl")});
    INFO(added.Describe());
    REQUIRE(added.exit_code == 0);
  }
  return shared->harness;
}

std::string AdmittedRunId(const std::string& err) {
  static const std::regex kAdmitted("kiln: run (\\S+) admitted");
  std::smatch m;
  return std::regex_search(err, m, kAdmitted) ? std::string(m[1]) : "";
}

int CountRuns(const HarnessInstance& harness) {
  Completed listed = harness.Kiln({"runs", "list", "--json", "--limit", "1000"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  nlohmann::json json = nlohmann::json::parse(listed.out);
  int count = 0;
  for (const auto& run : json.value("runs", nlohmann::json::array())) {
    // The harness's own check of a newly added definition's reference is not a submission.
    const std::string solution = run.value("solution_name", "");
    const std::string suffix = "_reference_check";
    bool check = solution.size() >= suffix.size() &&
                 solution.compare(solution.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (!check) ++count;
  }
  return count;
}

}  // namespace kiln::testing
