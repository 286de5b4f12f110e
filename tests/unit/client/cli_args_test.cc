#include <catch2/catch.hpp>

#include "client/cli.h"

using kiln::cli::Invocation;
using kiln::cli::ParseCommandLine;

namespace {

absl::StatusOr<Invocation> Parse(std::vector<std::string> argv,
                                 std::optional<std::string> env = std::nullopt) {
  return ParseCommandLine(argv, env);
}

std::string Error(std::vector<std::string> argv) {
  auto inv = Parse(std::move(argv));
  REQUIRE_FALSE(inv.ok());
  return std::string(inv.status().message());
}

}  // namespace

TEST_CASE("submit takes its flags in both spellings") {
  auto inv = Parse({"submit", "--definition", "d.json", "--solution=s", "--json", "--mode",
                    "kernelbench", "--timeout-s", "10"});
  REQUIRE(inv.ok());
  REQUIRE(inv->command->name == "submit");
  CHECK(inv->args.Get("definition") == "d.json");
  CHECK(inv->args.Get("solution") == "s");
  CHECK(inv->args.Has("json"));
  CHECK(inv->args.Get("mode") == "kernelbench");
  auto timeout = kiln::cli::SecondsFlag(*inv, "timeout-s", 3600);
  REQUIRE(timeout.ok());
  CHECK(*timeout == 10);
}

TEST_CASE("an unknown flag is named with its command") {
  CHECK(Error({"submit", "--definition", "d", "--solution", "s", "--foo"}) ==
        "kiln submit: unknown flag '--foo'");
  CHECK(Error({"runs", "list", "--bogus=1"}) == "kiln runs list: unknown flag '--bogus'");
  CHECK(Error({"--nope", "node"}) == "kiln: unknown flag '--nope'");
}

TEST_CASE("a missing required flag is named") {
  std::string e = Error({"submit", "--solution", "s"});
  CHECK(e.find("kiln submit: missing required flag --definition") != std::string::npos);
  e = Error({"submit", "--definition", "d"});
  CHECK(e.find("--solution") != std::string::npos);
}

TEST_CASE("a flag without its value is an error") {
  std::string e = Error({"submit", "--solution", "s", "--definition"});
  CHECK(e.find("kiln submit: flag '--definition' needs a value") != std::string::npos);
  CHECK(Error({"--server"}).find("needs a value") != std::string::npos);
}

TEST_CASE("boolean flags refuse a value and flags refuse repetition") {
  CHECK(Error({"defs", "list", "--json=yes"}) == "kiln defs list: flag '--json' takes no value");
  CHECK(Error({"runs", "list", "--limit", "1", "--limit", "2"}) ==
        "kiln runs list: flag '--limit' given twice");
}

TEST_CASE("positional arguments are counted") {
  CHECK(Error({"runs", "show"}) == "kiln runs show: missing RUN_ID");
  CHECK(Error({"runs", "show", "a", "b"}) == "kiln runs show: unexpected argument 'b'");
  CHECK(Error({"node", "extra"}) == "kiln node: unexpected argument 'extra'");
  auto inv = Parse({"runs", "show", "abc", "--json"});
  REQUIRE(inv.ok());
  CHECK(inv->args.positionals == std::vector<std::string>{"abc"});
}

TEST_CASE("unknown commands and subcommands are errors") {
  CHECK(Error({"frobnicate"}) == "kiln: unknown command 'frobnicate'");
  CHECK(Error({"runs", "delete"}) == "kiln: unknown command 'runs delete'");
  CHECK(Error({"runs"}).find("kiln runs: expected a subcommand") == 0);
  CHECK(Error({}) == "kiln: expected a command");
}

TEST_CASE("the server comes from the flag, then the environment, then the default") {
  auto inv = Parse({"node"});
  REQUIRE(inv.ok());
  CHECK(inv->server == "127.0.0.1:50051");
  inv = Parse({"node"}, "10.0.0.1:7000");
  REQUIRE(inv.ok());
  CHECK(inv->server == "10.0.0.1:7000");
  inv = Parse({"--server", "h:1", "node"}, "10.0.0.1:7000");
  REQUIRE(inv.ok());
  CHECK(inv->server == "h:1");
  inv = Parse({"--server=h:2", "defs", "list"});
  REQUIRE(inv.ok());
  CHECK(inv->server == "h:2");
  CHECK(inv->command->name == "defs list");
  inv = Parse({"node", "--server", "h:3"});
  REQUIRE(inv.ok());
  CHECK(inv->server == "h:3");
}

TEST_CASE("help is available at every level") {
  for (std::vector<std::string> argv :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"-h"},
                                             {"help"},
                                             {"help", "submit"},
                                             {"submit", "--help"},
                                             {"runs", "show", "-h"},
                                             {"help", "runs", "list"}}) {
    auto inv = Parse(argv);
    REQUIRE(inv.ok());
    CHECK(inv->help);
  }
  auto inv = Parse({"help", "runs", "list"});
  REQUIRE(inv.ok());
  REQUIRE(inv->command != nullptr);
  CHECK(inv->command->name == "runs list");
  // --help wins over a missing required flag.
  inv = Parse({"submit", "--help"});
  REQUIRE(inv.ok());
  CHECK(inv->help);
}

TEST_CASE("usage lists every command and a command's flags") {
  std::string all = kiln::cli::Usage(nullptr);
  for (const char* name :
       {"submit", "runs list", "runs show", "defs add", "defs list", "node", "demo"}) {
    CHECK(all.find(name) != std::string::npos);
  }
  std::string submit = kiln::cli::Usage(kiln::cli::FindCommand("submit"));
  CHECK(submit.find("--definition FILE|NAME") != std::string::npos);
  CHECK(submit.find("--timeout-s S") != std::string::npos);
  CHECK(submit.find("(required)") != std::string::npos);
}

TEST_CASE("the command list keeps names and summaries apart, long names too") {
  std::string all = kiln::cli::Usage(nullptr);
  // "campaign cancel" is the longest name: it still gets two spaces before its summary.
  CHECK(all.find("  campaign cancel  ") != std::string::npos);
  CHECK(all.find("  campaign start  ") != std::string::npos);
  CHECK(all.find("  help [CMD]  ") != std::string::npos);
}

TEST_CASE("help on a group lists that group's subcommands, not the global usage") {
  for (std::vector<std::string> argv :
       std::vector<std::vector<std::string>>{{"help", "runs"}, {"runs", "--help"}}) {
    auto inv = Parse(argv);
    REQUIRE(inv.ok());
    CHECK(inv->help);
    CHECK(inv->command == nullptr);
    CHECK(inv->help_group == "runs");
  }
  std::string runs = kiln::cli::GroupUsage("runs");
  CHECK(runs.find("runs list") != std::string::npos);
  CHECK(runs.find("runs export") != std::string::npos);
  CHECK(runs.find("defs add") == std::string::npos);
  CHECK(runs.find("exit codes") == std::string::npos);  // not the global usage
}

TEST_CASE("--status takes a status in any case and lists the valid ones when unknown") {
  auto inv = Parse({"runs", "list", "--status", "passed"});
  REQUIRE(inv.ok());
  auto status = kiln::cli::StatusFlag(*inv, "status");
  REQUIRE(status.ok());
  CHECK(*status == kiln::v1::PASSED);
  inv = Parse({"runs", "list", "--status", "Incorrect_Numerical"});
  REQUIRE(inv.ok());
  status = kiln::cli::StatusFlag(*inv, "status");
  REQUIRE(status.ok());
  CHECK(*status == kiln::v1::INCORRECT_NUMERICAL);
  inv = Parse({"runs", "list", "--status", "passd"});
  REQUIRE(inv.ok());
  status = kiln::cli::StatusFlag(*inv, "status");
  REQUIRE_FALSE(status.ok());
  const std::string message(status.status().message());
  CHECK(message.find("kiln runs list: --status: unknown status 'passd' (one of PASSED,") == 0);
  CHECK(message.find("INTERRUPTED") != std::string::npos);
}

TEST_CASE("numeric flags are checked") {
  auto inv = Parse({"runs", "list", "--limit", "ten"});
  REQUIRE(inv.ok());
  auto limit = kiln::cli::IntFlag(*inv, "limit", 50);
  REQUIRE_FALSE(limit.ok());
  CHECK(std::string(limit.status().message()).find("--limit") != std::string::npos);
  inv = Parse({"submit", "--definition", "d", "--solution", "s", "--timeout-s", "-1"});
  REQUIRE(inv.ok());
  CHECK_FALSE(kiln::cli::SecondsFlag(*inv, "timeout-s", 1).ok());
  inv = Parse({"runs", "list"});
  REQUIRE(inv.ok());
  auto fallback = kiln::cli::IntFlag(*inv, "limit", 50);
  REQUIRE(fallback.ok());
  CHECK(*fallback == 50);
}

TEST_CASE("arguments after -- are positional") {
  auto inv = Parse({"defs", "add", "--", "--odd-name.json"});
  REQUIRE(inv.ok());
  CHECK(inv->args.positionals == std::vector<std::string>{"--odd-name.json"});
}

TEST_CASE("defs import takes --definition several times, in order") {
  auto inv = Parse({"defs", "import", "ds/", "--definition", "b", "--definition=a", "--dry-run",
                    "--strict", "--json"});
  REQUIRE(inv.ok());
  REQUIRE(inv->command->name == "defs import");
  CHECK(inv->args.positionals == std::vector<std::string>{"ds/"});
  CHECK(inv->args.GetAll("definition") == std::vector<std::string>{"b", "a"});
  CHECK(inv->args.Has("dry-run"));
  CHECK(inv->args.Has("strict"));
  auto none = Parse({"defs", "import", "ds/"});
  REQUIRE(none.ok());
  CHECK(none->args.GetAll("definition").empty());
  CHECK(Error({"defs", "import"}) == "kiln defs import: missing DIR");
  CHECK(Error({"defs", "import", "ds", "--dry-run", "--dry-run"}) ==
        "kiln defs import: flag '--dry-run' given twice");
  CHECK(kiln::cli::Usage(inv->command).find("--definition NAME") != std::string::npos);
}
