// kiln mcp's evaluation budget over its ledger file (client/mcp/mcp_ledger.h): two ledgers on one
// file stand for two kiln mcp processes sharing it.
#include "client/mcp/mcp_ledger.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/common/files.h"

using kiln::cli::EvaluationLedger;

namespace {

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

struct Dir {
  Dir() : path(*kiln::MakeTempDir("", "kiln-ledger-test")) {}
  ~Dir() { (void)kiln::RemoveTree(path); }
  std::string path;
};

}  // namespace

TEST_CASE("mcp ledger: the budget counts every line of the file, whichever process wrote it") {
  Dir dir;
  const std::string path = dir.path + "/ledger";
  EvaluationLedger first(path, 2), second(path, 2);
  auto a = first.Reserve();
  REQUIRE(a.ok());
  REQUIRE(a->has_value());
  auto b = second.Reserve();
  REQUIRE(b.ok());
  REQUIRE(b->has_value());
  CHECK(**a != **b);
  // Both slots are held (pending): a third call through either is refused.
  auto c = first.Reserve();
  REQUIRE(c.ok());
  CHECK_FALSE(c->has_value());
  REQUIRE(first.Admit(**a, "run-a").ok());
  // A run never admitted gives its slot back, and the slot can be taken again.
  REQUIRE(second.Release(**b).ok());
  CHECK(Lines(path) == std::vector<std::string>{"run-a"});
  auto d = second.Reserve();
  REQUIRE(d.ok());
  REQUIRE(d->has_value());
  REQUIRE(second.Admit(**d, "run-d").ok());
  CHECK(Lines(path) == std::vector<std::string>{"run-a", "run-d"});
  // A ledger started later (a restarted kiln mcp) finds the budget spent.
  EvaluationLedger restarted(path, 2);
  auto e = restarted.Reserve();
  REQUIRE(e.ok());
  CHECK_FALSE(e->has_value());
}

TEST_CASE("mcp ledger: parallel reservations through two ledgers never pass the budget") {
  Dir dir;
  const std::string path = dir.path + "/ledger";
  EvaluationLedger first(path, 5), second(path, 5);
  std::vector<std::thread> threads;
  std::vector<int> taken(16, 0);
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      EvaluationLedger& ledger = i % 2 == 0 ? first : second;
      auto t = ledger.Reserve();
      if (t.ok() && t->has_value()) {
        taken[i] = 1;
        (void)ledger.Admit(**t, "run-" + std::to_string(i));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  int total = 0;
  for (int v : taken) total += v;
  CHECK(total == 5);
  CHECK(Lines(path).size() == 5);
}

TEST_CASE("mcp ledger: without a file the budget holds in the process; -1 is no limit") {
  EvaluationLedger none("", 0);
  auto refused = none.Reserve();
  REQUIRE(refused.ok());
  CHECK_FALSE(refused->has_value());
  EvaluationLedger unlimited("", -1);
  for (int i = 0; i < 10; ++i) {
    auto t = unlimited.Reserve();
    REQUIRE(t.ok());
    REQUIRE(t->has_value());
  }
  EvaluationLedger bad("/nonexistent-dir/ledger", 1);
  auto error = bad.Reserve();
  REQUIRE_FALSE(error.ok());
  CHECK_THAT(std::string(error.status().message()), Catch::Contains("--ledger /nonexistent-dir/ledger"));
}
