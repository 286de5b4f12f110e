// Per-definition evaluation settings (SetDefinitionSettings, GetDefinition) against an
// in-process kiln-harness: who may set them, how they are validated, what runs use them, and
// that they outlive the process.
#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "tests/unit/server/test_node.h"
#include "tests/unit/server/token_node.h"

namespace kiln {
namespace {

using testing::Evaluate;
using testing::TestNode;
using testing::VectorAddRequest;
using testing::VectorAddSolution;

constexpr char kDef[] = "vector_add_f32";

using SettingsNode = testing::TokenNode;
using testing::As;
using testing::kOpsToken;
using testing::kTeamToken;

grpc::Status Set(v1::Harness::Stub& stub, const std::string& token,
                 const v1::DefinitionSettings& settings, bool reset = false,
                 v1::DefinitionDetail* detail = nullptr) {
  v1::SetDefinitionSettingsRequest request;
  request.set_definition(kDef);
  *request.mutable_settings() = settings;
  request.set_reset(reset);
  v1::DefinitionDetail ignored;
  return stub.SetDefinitionSettings(As(token).get(), request, detail ? detail : &ignored);
}

v1::DefinitionDetail Show(v1::Harness::Stub& stub, const std::string& token = kTeamToken) {
  v1::GetDefinitionRequest request;
  request.set_name(kDef);
  v1::DefinitionDetail detail;
  grpc::Status status = stub.GetDefinition(As(token).get(), request, &detail);
  INFO(status.error_message());
  REQUIRE(status.ok());
  return detail;
}

// The effective setting `name` of `detail`.
v1::EffectiveSetting Effective(const v1::DefinitionDetail& detail, const std::string& name) {
  for (const v1::EffectiveSetting& s : detail.effective()) {
    if (s.name() == name) return s;
  }
  FAIL("no setting " << name);
  return {};
}

testing::EvaluateOutcome Submit(v1::Harness::Stub& stub, const v1::EvaluateRequest& request) {
  auto ctx = As(kOpsToken);
  testing::EvaluateOutcome out;
  auto reader = stub.Evaluate(ctx.get(), request);
  v1::EvaluateEvent event;
  while (reader->Read(&event)) out.events.push_back(event);
  out.status = reader->Finish();
  return out;
}

v1::DefinitionSettings GdnCounts() {
  v1::DefinitionSettings s;
  s.set_warmup(1);
  s.set_iterations(5);
  s.set_trials(3);
  return s;
}

TEST_CASE("a definition shows flashinfer-bench's defaults until an operator sets its own") {
  SettingsNode node;
  v1::DefinitionDetail before = Show(node.stub());
  CHECK(before.definition().name() == kDef);
  CHECK(before.summary().workload_count() > 0);
  REQUIRE(before.effective_size() == 8);
  for (const v1::EffectiveSetting& s : before.effective()) {
    INFO(s.name());
    CHECK(s.source() == "default");
    CHECK(s.value() == s.default_value());
  }
  CHECK(Effective(before, "atol").value() == 1e-2);
  CHECK(Effective(before, "iterations").value() == 50);
  // Not a KernelBench problem: no own-kernel share is asked of it unless an operator sets one.
  CHECK(Effective(before, "min_own_kernel_share").value() == 0);

  v1::DefinitionSettings moe;
  moe.set_atol(1);
  moe.set_rtol(0.3);
  moe.set_required_matched_ratio(0.9);
  v1::DefinitionDetail after;
  REQUIRE(Set(node.stub(), kOpsToken, moe, false, &after).ok());
  CHECK(Effective(after, "atol").value() == 1);
  CHECK(Effective(after, "atol").source() == "set");
  CHECK(Effective(after, "rtol").value() == 0.3);
  CHECK(Effective(after, "required_matched_ratio").value() == 0.9);
  CHECK(Effective(after, "warmup").source() == "default");
  // Only the flags given change.
  REQUIRE(Set(node.stub(), kOpsToken, GdnCounts()).ok());
  const v1::DefinitionDetail both = Show(node.stub());
  CHECK(Effective(both, "atol").value() == 1);
  CHECK(Effective(both, "iterations").value() == 5);
  CHECK(both.summary().settings().trials() == 3);
  v1::DefinitionSettings share;
  share.set_min_own_kernel_share(0.25);
  REQUIRE(Set(node.stub(), kOpsToken, share).ok());
  const v1::DefinitionDetail shared = Show(node.stub());
  CHECK(Effective(shared, "min_own_kernel_share").value() == 0.25);
  CHECK(Effective(shared, "min_own_kernel_share").source() == "set");
  CHECK(shared.summary().settings().min_own_kernel_share() == 0.25);  // stored, read back
  CHECK(Effective(shared, "allow_torch_only").value() == 0);
  v1::DefinitionSettings torch_only;
  torch_only.set_allow_torch_only(true);
  REQUIRE(Set(node.stub(), kOpsToken, torch_only).ok());
  const v1::DefinitionDetail allowed = Show(node.stub());
  CHECK(Effective(allowed, "allow_torch_only").value() == 1);
  CHECK(Effective(allowed, "allow_torch_only").source() == "set");
  CHECK(allowed.summary().settings().allow_torch_only());  // stored, read back
  CHECK(Effective(allowed, "min_own_kernel_share").value() == 0.25);  // the others stay
  // Reset: back to the defaults.
  REQUIRE(Set(node.stub(), kOpsToken, {}, /*reset=*/true).ok());
  const v1::DefinitionDetail reset = Show(node.stub());
  for (const v1::EffectiveSetting& s : reset.effective()) CHECK(s.source() == "default");
}

TEST_CASE("a team cannot change the settings, and nothing changes") {
  SettingsNode node;
  v1::DefinitionSettings loose;
  loose.set_atol(100);
  grpc::Status status = Set(node.stub(), kTeamToken, loose);
  CHECK(status.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(Effective(Show(node.stub()), "atol").source() == "default");
}

TEST_CASE("an invalid setting is refused naming the field, and nothing changes") {
  SettingsNode node;
  v1::DefinitionSettings s = GdnCounts();
  s.set_atol(-1);
  grpc::Status status = Set(node.stub(), kOpsToken, s);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(status.error_message() == "settings.atol: must be a finite number >= 0, got -1");
  s = GdnCounts();
  s.set_iterations(20000);
  status = Set(node.stub(), kOpsToken, s);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(status.error_message() == "settings.iterations: must be <= 10000, got 20000");
  s = GdnCounts();
  s.set_required_matched_ratio(0);
  CHECK(Set(node.stub(), kOpsToken, s).error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  const v1::DefinitionDetail unchanged = Show(node.stub());
  for (const v1::EffectiveSetting& e : unchanged.effective()) CHECK(e.source() == "default");
  // An unknown definition is NOT_FOUND.
  v1::SetDefinitionSettingsRequest request;
  request.set_definition("no_such_definition");
  *request.mutable_settings() = GdnCounts();
  v1::DefinitionDetail detail;
  CHECK(node.stub().SetDefinitionSettings(As(kOpsToken).get(), request, &detail).error_code() ==
        grpc::StatusCode::NOT_FOUND);
}

TEST_CASE("a run judges with the definition's tolerance and records it in every trace") {
  SettingsNode node;
  // Off by 0.5 everywhere: |x - y| = 0.5 > atol 0.01, and relatively more than 1% of most sums.
  const v1::EvaluateRequest request =
      VectorAddRequest(VectorAddSolution("off_by_half", "c[i] = a[i] + b[i] + 0.5f;"));
  const v1::Run strict = Submit(node.stub(), request).run();
  CHECK(strict.status() == v1::INCORRECT_NUMERICAL);
  REQUIRE(strict.traces_size() == 1);
  CHECK(strict.traces(0).kiln().tolerance().atol() == 1e-2);
  CHECK(strict.traces(0).kiln().tolerance().required_matched_ratio() == 1.0);

  v1::DefinitionSettings loose;
  loose.set_atol(1);
  REQUIRE(Set(node.stub(), kOpsToken, loose).ok());
  const v1::Run judged = Submit(node.stub(), request).run();
  INFO(judged.reason());
  CHECK(judged.status() == v1::PASSED);
  REQUIRE(judged.traces_size() == 1);
  CHECK(judged.traces(0).kiln().tolerance().atol() == 1);
  CHECK(judged.traces(0).kiln().tolerance().rtol() == 1e-2);
}

TEST_CASE("official mode times with the definition's counts; kernelbench keeps its own") {
  SettingsNode node;
  REQUIRE(Set(node.stub(), kOpsToken, GdnCounts()).ok());
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];"));
  request.set_mode("official");
  const v1::Run run = Submit(node.stub(), request).run();
  INFO(run.reason());
  REQUIRE(run.status() == v1::PASSED);
  for (const v1::TimingResult* t :
       {&run.traces(0).kiln().timing(), &run.traces(0).kiln().reference_timing()}) {
    CHECK(t->mode() == "official");
    CHECK(t->warmup() == 1);
    CHECK(t->iterations() == 5);
    CHECK(t->trials() == 3);
    CHECK(t->trial_medians_ms_size() == 3);
  }
  // The reference latency cached under these counts is not served for other counts.
  v1::DefinitionSettings more;
  more.set_iterations(7);
  REQUIRE(Set(node.stub(), kOpsToken, more).ok());
  const v1::Run again = Submit(node.stub(), request).run();
  REQUIRE(again.status() == v1::PASSED);
  CHECK(again.traces(0).kiln().reference_timing().iterations() == 7);
  CHECK(again.traces(0).kiln().timing().iterations() == 7);

  request.set_mode("kernelbench");
  const v1::Run kernelbench = Submit(node.stub(), request).run();
  REQUIRE(kernelbench.status() == v1::PASSED);
  CHECK(kernelbench.traces(0).kiln().timing().iterations() == 100);
  CHECK(kernelbench.traces(0).kiln().timing().warmup() == 3);
}

TEST_CASE("settings survive a restart, which registers the built-in definition again") {
  SettingsNode node;
  v1::DefinitionSettings s = GdnCounts();
  s.set_rtol(0.3);
  REQUIRE(Set(node.stub(), kOpsToken, s).ok());
  node.Restart();
  const v1::DefinitionDetail detail = Show(node.stub());
  CHECK(Effective(detail, "rtol").value() == 0.3);
  CHECK(Effective(detail, "rtol").source() == "set");
  CHECK(Effective(detail, "iterations").value() == 5);
  CHECK(Effective(detail, "warmup").value() == 1);
}

TEST_CASE("a definition cannot carry timing overrides of its own") {
  SettingsNode node;
  v1::PutDefinitionRequest put;
  *put.mutable_definition() = Show(node.stub()).definition();
  put.mutable_definition()->set_name("vector_add_with_counts");
  put.mutable_definition()->mutable_timing_overrides()->set_iterations(5);
  v1::PutDefinitionResponse response;
  grpc::Status status = node.stub().PutDefinition(As(kOpsToken).get(), put, &response);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(status.error_message().rfind("definition.timing_overrides:", 0) == 0);
}

}  // namespace
}  // namespace kiln
