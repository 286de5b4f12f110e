// The tokens file: principals, roles and token hashes; errors name file:line.
#include "access/token_file.h"

#include <catch2/catch.hpp>
#include <string>

#include "harness/common/sha256.h"

namespace kiln {
namespace {

const std::string kHashA = Sha256Hex("token-a");
const std::string kHashB = Sha256Hex("token-b");

TEST_CASE("a tokens file lists principals with roles and hashes, comments and blanks ignored") {
  const std::string text = "# principals\n\nteam-red team " + kHashA +
                           "  # the red team\n\tops\toperator\t" + kHashB + "\r\n";
  auto entries = ParseTokenFile(text, "tokens.txt");
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 2);
  CHECK((*entries)[0].principal.name == "team-red");
  CHECK((*entries)[0].principal.role == Role::kTeam);
  CHECK((*entries)[0].sha256_hex == kHashA);
  CHECK((*entries)[1].principal.name == "ops");
  CHECK((*entries)[1].principal.role == Role::kOperator);
}

TEST_CASE("an upper-case hash is accepted and kept lower case") {
  std::string upper = kHashA;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto entries = ParseTokenFile("bot agent " + upper + "\n", "t");
  REQUIRE(entries.ok());
  CHECK((*entries)[0].sha256_hex == kHashA);
  CHECK((*entries)[0].principal.role == Role::kAgent);
}

TEST_CASE("tokens file errors name the file and line") {
  struct Case {
    std::string text;
    std::string needle;
  };
  const Case cases[] = {
      {"a team\n", "t.txt:1: expected NAME ROLE SHA256HEX, found 2 field(s)"},
      {"# ok\na admin " + kHashA + "\n", "t.txt:2: role 'admin' is not one of team, agent"},
      {"a team abc123\n", "t.txt:1: SHA256HEX"},
      {"a team " + kHashA + "\na agent " + kHashB + "\n", "t.txt:2: name 'a' given twice"},
      {"a team " + kHashA + "\nb team " + kHashA + "\n", "t.txt:2: the same token hash"},
      {"bad/name team " + kHashA + "\n", "t.txt:1: name 'bad/name'"},
      {"a team " + kHashA + " extra\n", "t.txt:1: expected NAME ROLE SHA256HEX, found 4"},
      {"kiln operator " + kHashA + "\n", "t.txt:1: name 'kiln' is reserved"},
  };
  for (const Case& c : cases) {
    auto entries = ParseTokenFile(c.text, "t.txt");
    REQUIRE_FALSE(entries.ok());
    CHECK(entries.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(entries.status().message()), Catch::Contains(c.needle));
  }
}

TEST_CASE("an unreadable or empty tokens file is refused") {
  auto missing = LoadTokenFile("/nonexistent/kiln-tokens");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("/nonexistent/kiln-tokens"));
}

}  // namespace
}  // namespace kiln
