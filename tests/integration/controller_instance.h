// What the kiln-controller integration tests share: a real kiln-controller process on loopback
// (ControllerInstance), reading its SQLite archive, and the campaign files the tests write.
#ifndef KILN_TESTS_INTEGRATION_CONTROLLER_INSTANCE_H_
#define KILN_TESTS_INTEGRATION_CONTROLLER_INSTANCE_H_

#include <signal.h>
#include <sqlite3.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <thread>
#include "harness/common/sha256.h"
#include "tests/integration/harness_instance.h"
#include "tests/integration/subprocess.h"
#include <kiln/abi.h>
#include <kiln/abi.h>

namespace kiln::testing {

using Json = nlohmann::json;

inline std::string ControllerBinary() {
  return std::string(KILN_BINARY_DIR) + "/bin/kiln-controller";
}
inline std::string Examples() { return std::string(KILN_SOURCE_DIR) + "/controller/examples"; }

class ControllerInstance {
 public:
  ControllerInstance(std::string data_dir, std::string harness,
                     const std::vector<std::string>& extra_flags = {})
      : data_dir_(std::move(data_dir)) {
    std::vector<std::string> argv = {ControllerBinary(), "--listen", "127.0.0.1:0", "--data-dir",
                                     data_dir_, "--harness", harness};
    argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
    child_.emplace(Child::Start(argv, logs_ / "stdout", logs_ / "stderr"));
    address_ = WaitForListening(*child_, "kiln-controller");
  }
  ~ControllerInstance() {
    if (child_ && child_->running()) {
      child_->Signal(SIGTERM);
      child_->Wait(30);
    }
  }
  void Kill() {
    child_->Signal(SIGKILL);
    child_->Wait(30);
  }
  Completed Campaign(std::vector<std::string> args, double timeout_s = 600) const {
    args.insert(args.begin(), "campaign");
    args.push_back("--controller");
    args.push_back(address_);
    return Kiln(args, timeout_s);
  }
  std::string db() const { return data_dir_ + "/controller.db"; }
  const std::string& address() const { return address_; }

 private:
  std::string data_dir_;
  ScratchDir logs_;
  std::optional<Child> child_;
  std::string address_;
};

// Rows of a query on the controller's archive, each column as text.
inline std::vector<std::vector<std::string>> Query(const std::string& db,
                                                  const std::string& sql) {
  sqlite3* conn = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &conn, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_busy_timeout(conn, 5000);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(conn, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  std::vector<std::vector<std::string>> rows;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      const unsigned char* text = sqlite3_column_text(stmt, i);
      row.push_back(text ? reinterpret_cast<const char*>(text) : "");
    }
    rows.push_back(row);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(conn);
  return rows;
}

inline int Count(const std::string& db, const std::string& sql) {
  return std::stoi(Query(db, sql).at(0).at(0));
}

// The matmul example copied into `dir`, with `edits` applied to its YAML (each a from, to pair).
inline std::string MatmulCampaign(const ScratchDir& dir,
                           const std::vector<std::pair<std::string, std::string>>& edits) {
  std::filesystem::copy(Examples(), dir.path(), std::filesystem::copy_options::recursive);
  std::string yaml = Slurp(dir / "sweep-host.yaml");
  for (const auto& [from, to] : edits) {
    size_t pos = yaml.find(from);
    REQUIRE(pos != std::string::npos);
    yaml.replace(pos, from.size(), to);
  }
  std::ofstream(dir / "campaign.yaml") << yaml;
  return dir / "campaign.yaml";
}

// files/campaign.yaml: a campaign on scale_add_f32 (host backend, reference baseline) whose one
// agent is the command `script`, written to files/agent.sh; `rest` ends the YAML (budget, ...).
inline void CommandAgentCampaign(const ScratchDir& files, const std::string& name,
                          const std::string& script, int timeout_s, const std::string& rest) {
  std::filesystem::copy(DataPath("scale_add_f32.json"), files / "scale_add_f32.json");
  std::filesystem::copy(DataPath("scale_add_f32_single.jsonl"), files / "workloads.jsonl");
  std::ofstream(files / "agent.sh") << script;
  std::filesystem::permissions(files / "agent.sh", std::filesystem::perms::owner_all);
  std::ofstream(files / "campaign.yaml")
      << "name: " << name
      << "\n"
         "definition: scale_add_f32.json\n"
         "workloads: workloads.jsonl\n"
         "baseline: reference\n"
         "target: {backend: host}\n"
         "agents:\n"
         "  - name: script\n"
         "    type: command\n"
         "    argv: ['"
      << (files / "agent.sh") << "']\n    timeout_s: " << timeout_s << "\n"
      << rest;
}

inline Json ShowJson(const ControllerInstance& controller, const std::string& id) {
  Completed show = controller.Campaign({"show", id, "--json"});
  REQUIRE(show.exit_code == 0);
  return Json::parse(show.out);
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_INTEGRATION_CONTROLLER_INSTANCE_H_
