#include "controller/agents/sweep_agent.h"

#include <catch2/catch.hpp>
#include <set>

namespace kiln::controller {
namespace {

SweepAgentSpec Spec() {
  SweepAgentSpec s;
  s.solution_template.set_name("k");
  s.solution_template.mutable_spec()->set_language("cpp");
  s.solution_template.mutable_spec()->set_entry_point("k.cc::run");
  v1::SourceFile* f = s.solution_template.add_sources();
  f->set_path("k.cc");
  f->set_content("int b = {{B}}; int u = {{U}}; int b2 = {{B}};");
  s.parameters = {{"B", {"8", "16", "32"}}, {"U", {"1", "4"}}};
  return s;
}

TEST_CASE("the sweep substitutes every placeholder of a grid point") {
  SweepAgent agent(Spec());
  v1::Solution s = agent.Instantiate({{"B", "16"}, {"U", "4"}});
  CHECK(s.sources(0).content() == "int b = 16; int u = 4; int b2 = 16;");
  CHECK(s.name() == "k_B16_U4");
  CHECK(agent.Grid().size() == 6);
}

TEST_CASE("the sweep offers only unseen points and says when the grid is exhausted") {
  SweepAgent agent(Spec());
  std::set<std::string> seen;
  AgentRequest request;
  request.max_candidates = 4;
  request.seen = [&seen](const std::string& h) { return seen.count(h) > 0; };
  AgentResponse first = agent.Generate(request);
  REQUIRE(first.candidates.size() == 4);
  CHECK_FALSE(first.exhausted);
  for (const AgentCandidate& c : first.candidates) seen.insert(ContentHash(c.solution));
  AgentResponse second = agent.Generate(request);
  REQUIRE(second.candidates.size() == 2);
  CHECK(second.exhausted);
  for (const AgentCandidate& c : second.candidates) {
    CHECK(seen.count(ContentHash(c.solution)) == 0);
    seen.insert(ContentHash(c.solution));
  }
  CHECK(seen.size() == 6);
  CHECK(agent.Generate(request).candidates.empty());
}

TEST_CASE("the sweep tries the incumbent's neighbours first") {
  SweepAgent agent(Spec());
  AgentRequest request;
  request.max_candidates = 2;
  request.incumbent_params_json = R"({"B":"32","U":"1"})";
  std::set<std::string> seen = {ContentHash(agent.Instantiate({{"B", "32"}, {"U", "1"}}))};
  request.seen = [&seen](const std::string& h) { return seen.count(h) > 0; };
  AgentResponse r = agent.Generate(request);
  REQUIRE(r.candidates.size() == 2);
  // Distance 1 from (32, 1): (16, 1) and (32, 4), in grid order.
  CHECK(r.candidates[0].params_json == R"({"B":"16","U":"1"})");
  CHECK(r.candidates[1].params_json == R"({"B":"32","U":"4"})");
}

TEST_CASE("content hashes ignore names but not sources") {
  SweepAgent agent(Spec());
  v1::Solution a = agent.Instantiate({{"B", "8"}, {"U", "1"}});
  v1::Solution renamed = a;
  renamed.set_name("other");
  renamed.set_description("same code");
  CHECK(ContentHash(a) == ContentHash(renamed));
  v1::Solution changed = a;
  changed.mutable_sources(0)->set_content("int b = 9;");
  CHECK(ContentHash(a) != ContentHash(changed));
}

}  // namespace
}  // namespace kiln::controller
