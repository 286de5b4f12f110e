#include "client/export.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "absl/strings/str_join.h"
#include "harness/model/json_interop.h"
#include "tests/unit/model/flashinfer_trace_schema.h"

using namespace kiln;
using Json = nlohmann::ordered_json;

namespace {

v1::Run FinishedRun() {
  v1::Run run;
  run.set_run_id("r-1");
  run.set_definition("vector_add_f32");
  run.set_solution_name("vadd");
  run.set_solution_hash("0123456789abcdef");
  run.set_author("team-a");
  run.set_backend("host");
  run.set_state(v1::RUN_DONE);
  run.set_created_unix_ms(1796000000000);
  run.set_finished_unix_ms(1796000001500);
  v1::Trace* t = run.add_traces();
  t->set_definition("vector_add_f32");
  t->set_solution("vadd");
  t->mutable_workload()->set_uuid("w-1");
  v1::AxisValue* n = t->mutable_workload()->add_axes();
  n->set_name("n");
  n->set_value(4096);
  t->mutable_evaluation()->set_status(v1::CANCELLED);  // no hardware, no timestamp
  t->mutable_kiln()->set_reason("cancelled by the client");
  v1::Solution* s = run.mutable_solution();
  s->set_name("vadd");
  s->set_definition("vector_add_f32");
  s->mutable_spec()->set_language("cpp");
  s->mutable_spec()->set_entry_point("kernel.cc::run");
  v1::SourceFile* f = s->add_sources();
  f->set_path("kernel.cc");
  f->set_content("int x;\n");
  return run;
}

}  // namespace

TEST_CASE("an exported line takes the run's backend and finish time where the trace has none") {
  const v1::Run run = FinishedRun();
  const std::string line = cli::FlashinferTraceLine(run, run.traces(0));
  const Json doc = Json::parse(line);
  INFO(line);
  CHECK(absl::StrJoin(testing::FlashinferTraceViolations(doc), "\n").empty());
  CHECK(doc["evaluation"]["environment"]["hardware"] == "host");
  CHECK(doc["evaluation"]["timestamp"] == "2026-11-30T00:53:21.500000Z");
  CHECK(doc["evaluation"]["status"] == "TIMEOUT");
  CHECK(doc["evaluation"]["log"] == "kiln status: CANCELLED: cancelled by the client");
  CHECK(doc["solution"] == "vadd");
  CHECK(Json::parse(cli::FlashinferTraceLine(run, run.traces(0), "vadd_01234567"))["solution"] ==
        "vadd_01234567");
  absl::StatusOr<v1::Trace> back = ParseTraceJson(line);
  REQUIRE(back.ok());
  CHECK(back->evaluation().status() == v1::CANCELLED);
}

TEST_CASE("only traces with a verdict are exported") {
  v1::Trace t;
  CHECK_FALSE(cli::HasVerdict(t));
  t.mutable_evaluation();
  CHECK_FALSE(cli::HasVerdict(t));
  t.mutable_evaluation()->set_status(v1::INTERRUPTED);
  CHECK(cli::HasVerdict(t));
}

TEST_CASE("an exported solution has the author and hardware flashinfer-bench requires") {
  v1::Run run = FinishedRun();
  Json s = Json::parse(cli::FlashinferSolutionJson(run, "vadd_01234567"));
  CHECK(s["name"] == "vadd_01234567");
  CHECK(s["definition"] == "vector_add_f32");
  CHECK(s["author"] == "team-a");
  CHECK(s["spec"]["target_hardware"] == Json::array({"host"}));
  CHECK(s["sources"][0]["path"] == "kernel.cc");
  CHECK_FALSE(s.contains("kiln"));
  run.clear_author();
  run.set_principal("agent-7");
  CHECK(Json::parse(cli::FlashinferSolutionJson(run))["author"] == "agent-7");
  run.clear_principal();
  CHECK(Json::parse(cli::FlashinferSolutionJson(run))["author"] == "unknown");
}

TEST_CASE("--since takes a date, an RFC 3339 time or an age") {
  const absl::Time now = absl::FromUnixSeconds(1796000000);
  absl::StatusOr<absl::Time> t = cli::ParseSince("2026-11-29", now);
  REQUIRE(t.ok());
  CHECK(absl::FormatTime("%Y-%m-%dT%H:%M:%S", *t, absl::UTCTimeZone()) == "2026-11-29T00:00:00");
  t = cli::ParseSince("2026-11-29T12:30:00+01:00", now);
  REQUIRE(t.ok());
  CHECK(absl::FormatTime("%H:%M", *t, absl::UTCTimeZone()) == "11:30");
  t = cli::ParseSince("7d", now);
  REQUIRE(t.ok());
  CHECK(*t == now - absl::Hours(168));
  t = cli::ParseSince("90m", now);
  REQUIRE(t.ok());
  CHECK(*t == now - absl::Minutes(90));
  absl::StatusOr<absl::Time> bad = cli::ParseSince("yesterday", now);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("'yesterday'") != std::string::npos);
  CHECK_FALSE(cli::ParseSince("7w", now).ok());
}

TEST_CASE("file names keep only safe characters") {
  CHECK(cli::SafeFileName("vadd_v1.2-x") == "vadd_v1.2-x");
  CHECK(cli::SafeFileName("../etc/passwd") == ".._etc_passwd");
  CHECK(cli::SafeFileName("..") == "_..");
  CHECK(cli::SafeFileName("") == "_");
}

TEST_CASE("solution names stay unique across the dataset and renames are counted per solution") {
  auto run = [](const std::string& name, const std::string& hash) {
    v1::Run r;
    r.set_solution_name(name);
    r.set_solution_hash(hash);
    return r;
  };
  const std::string h1(64, '1'), h2(64, '2');
  cli::SolutionNames names;
  CHECK(names.NameFor(run("vadd", h1)) == "vadd");
  CHECK(names.NameFor(run("vadd", h1)) == "vadd");  // another run of the same code
  CHECK(names.NameFor(run("vadd", h2)) == "vadd_22222222");
  CHECK(names.NameFor(run("vadd", h2)) == "vadd_22222222");  // counted once, not per run
  CHECK(names.renamed() == 1);
  // A submission literally named "vadd_33333333" holds that name; other code called "vadd"
  // whose hash starts 33333333 takes the whole hash instead of sharing it.
  CHECK(names.NameFor(run("vadd_33333333", h1)) == "vadd_33333333");
  const std::string h3 = "33333333" + std::string(56, '4');
  CHECK(names.NameFor(run("vadd", h3)) == "vadd_" + h3);
  CHECK(names.NameFor(run("vadd", h3)) == "vadd_" + h3);
  CHECK(names.renamed() == 2);
}
