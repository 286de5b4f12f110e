// kiln defs set's flags and what kiln defs show / list print (client/definition_detail.h).
#include "client/definition_detail.h"

#include <catch2/catch.hpp>
#include <regex>
#include <string>

#include "client/cli.h"

namespace kiln {
namespace {

absl::StatusOr<v1::DefinitionSettings> FromCommandLine(const std::vector<std::string>& argv) {
  absl::StatusOr<cli::Invocation> inv = cli::ParseCommandLine(argv, std::nullopt);
  REQUIRE(inv.ok());
  REQUIRE(inv->command->name == "defs set");
  return cli::SettingsFromFlags(inv->args, "defs set");
}

std::string Error(const std::vector<std::string>& argv) {
  absl::StatusOr<v1::DefinitionSettings> s = FromCommandLine(argv);
  REQUIRE_FALSE(s.ok());
  return std::string(s.status().message());
}

TEST_CASE("defs set reads only the flags given") {
  absl::StatusOr<v1::DefinitionSettings> s =
      FromCommandLine({"defs", "set", "moe", "--atol", "1", "--rtol=0.3",
                       "--required-matched-ratio", "0.9", "--warmup", "0"});
  REQUIRE(s.ok());
  CHECK(s->atol() == 1);
  CHECK(s->rtol() == 0.3);
  CHECK(s->required_matched_ratio() == 0.9);
  CHECK(s->warmup() == 0);
  CHECK_FALSE(s->has_iterations());
  CHECK_FALSE(s->has_trials());
}

TEST_CASE("defs set names the flag of a bad value") {
  CHECK(Error({"defs", "set", "moe", "--atol", "-1"}) ==
        "kiln defs set: --atol: must be a finite number >= 0, got -1");
  CHECK(Error({"defs", "set", "moe", "--rtol", "loose"}) ==
        "kiln defs set: --rtol: expected a number, got 'loose'");
  CHECK(Error({"defs", "set", "moe", "--required-matched-ratio", "1.1"}) ==
        "kiln defs set: --required-matched-ratio: must be in (0, 1], got 1.1");
  CHECK(Error({"defs", "set", "moe", "--iterations", "0"}) ==
        "kiln defs set: --iterations: must be >= 1, got 0");
  CHECK(Error({"defs", "set", "moe", "--iterations", "5.5"}) ==
        "kiln defs set: --iterations: expected a whole number, got '5.5'");
  CHECK(Error({"defs", "set", "moe", "--trials", "101"}) ==
        "kiln defs set: --trials: must be <= 100, got 101");
  CHECK(Error({"defs", "set", "moe", "--warmup", "-2"}) ==
        "kiln defs set: --warmup: must be >= 0, got -2");
}

v1::DefinitionDetail Detail() {
  v1::DefinitionDetail d;
  v1::Definition* def = d.mutable_definition();
  def->set_name("gemm_n128_k2048");
  def->set_op_type("gemm");
  def->add_tags("status:verified");
  v1::Axis* m = def->add_axes();
  m->set_name("M");
  v1::Axis* n = def->add_axes();
  n->set_name("N");
  n->set_is_const(true);
  n->set_value(128);
  v1::TensorSpec* a = def->add_inputs();
  a->set_name("A");
  a->add_shape("M");
  a->add_shape("N");
  a->set_dtype(v1::DTYPE_FLOAT16);
  v1::TensorSpec* c = def->add_outputs();
  c->set_name("C");
  c->add_shape("M");
  c->set_dtype(v1::DTYPE_FLOAT16);
  d.mutable_summary()->set_name("gemm_n128_k2048");
  d.mutable_summary()->set_workload_count(25);
  d.mutable_summary()->set_has_native_reference(true);
  d.mutable_summary()->mutable_settings()->set_atol(1);
  d.mutable_summary()->mutable_settings()->set_iterations(5);
  auto add = [&d](const std::string& name, double value, const std::string& source, double def) {
    v1::EffectiveSetting* s = d.add_effective();
    s->set_name(name);
    s->set_value(value);
    s->set_source(source);
    s->set_default_value(def);
  };
  add("atol", 1, "set", 0.01);
  add("rtol", 0.01, "default", 0.01);
  add("required_matched_ratio", 1, "default", 1);
  add("warmup", 10, "default", 10);
  add("iterations", 5, "set", 50);
  add("trials", 3, "default", 3);
  return d;
}

TEST_CASE("defs show prints the definition and marks which settings are defaults") {
  const std::string text = cli::DefinitionDetailText(Detail());
  CHECK_THAT(text, Catch::Contains("definition        gemm_n128_k2048\n"));
  CHECK_THAT(text, Catch::Contains("axes              M (var), N = 128\n"));
  CHECK_THAT(text, Catch::Contains("inputs            A [M, N] float16\n"));
  CHECK_THAT(text, Catch::Contains("workloads         25\n"));
  CHECK_THAT(text, Catch::Contains("native reference  yes\n"));
  CHECK_THAT(text, Catch::Contains("integrity         ok\n"));
  CHECK(std::regex_search(text, std::regex("atol +1\\.0 +set +0\\.01\n")));
  CHECK(std::regex_search(text, std::regex("iterations +5 +set +50\n")));
  CHECK(std::regex_search(text, std::regex("trials +3 +default +3\n")));
}

TEST_CASE("defs show --json keys every setting by name with its source and default") {
  const cli::Json json = cli::DefinitionDetailJson(Detail());
  CHECK(json["name"] == "gemm_n128_k2048");
  CHECK(json["axes"]["N"]["value"] == 128);
  CHECK(json["inputs"]["A"]["shape"] == cli::Json::array({"M", "N"}));
  CHECK(json["workload_count"] == 25);
  CHECK(json["native_reference"] == true);
  CHECK(json["settings"]["atol"]["value"] == 1.0);
  CHECK(json["settings"]["atol"]["source"] == "set");
  CHECK(json["settings"]["iterations"]["value"] == 5);
  CHECK(json["settings"]["iterations"]["default"] == 50);
  CHECK(json["settings"]["trials"]["source"] == "default");
}

TEST_CASE("defs list shows the settings an operator made, or a dash") {
  CHECK(cli::SettingsColumn(Detail().summary()) == "atol=1 iterations=5");
  CHECK(cli::SettingsColumn(v1::DefinitionSummary()) == "-");
}

}  // namespace
}  // namespace kiln
