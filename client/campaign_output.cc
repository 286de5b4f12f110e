#include "client/campaign_output.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln::cli {

namespace {

std::string Left(const v1::Campaign& c) {
  const v1::Budget& b = c.budget();
  const v1::BudgetUsage& u = c.used();
  std::string out;
  auto add = [&out](const std::string& part) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", part);
  };
  if (b.max_candidates() > 0) {
    add(absl::StrCat(b.max_candidates() - u.candidates() - u.agent_evaluations(), " candidates"));
  }
  if (b.max_rounds() > 0) add(absl::StrCat(b.max_rounds() - u.rounds(), " rounds"));
  if (b.wall_clock_s() > 0) add(absl::StrFormat("%.0f s", b.wall_clock_s() - u.wall_clock_s()));
  if (b.max_cost_usd() > 0) add(absl::StrFormat("%.2f USD", b.max_cost_usd() - u.cost_usd()));
  if (b.max_gpu_seconds() > 0) {
    add(absl::StrFormat("%.0f GPU-s", b.max_gpu_seconds() - u.gpu_seconds()));
  }
  return out.empty() ? "unlimited" : out;
}

std::string Ms(double v) { return v > 0 ? absl::StrFormat("%.4f ms", v) : std::string("-"); }

// "4 s", "3 min 20 s", "2 h 5 min"
std::string Span(int64_t ms) {
  const int64_t s = std::max<int64_t>(0, ms / 1000);
  if (s < 60) return absl::StrCat(s, " s");
  if (s < 3600) return absl::StrCat(s / 60, " min ", s % 60, " s");
  return absl::StrCat(s / 3600, " h ", (s % 3600) / 60, " min");
}

std::string Plural(int n, const char* word) {
  return absl::StrCat(n, " ", word, n == 1 ? "" : "s");
}

}  // namespace

std::string ProgressLine(const v1::CampaignEvent& e) {
  const v1::Campaign& c = e.campaign();
  return absl::StrCat("round ", c.round(), " ", c.pass(), " | agent ", c.agent(), " | best ",
                      Ms(c.best_latency_ms()), " (baseline ", Ms(c.baseline_latency_ms()),
                      ") | budget left: ", Left(c), " | ", e.kind(), ": ", e.message());
}

std::string EventLine(const v1::CampaignEvent& e) {
  return absl::StrCat("[", e.seq(), "] ", e.kind(), ": ", e.message());
}

Json WaitJson(const v1::Campaign& c) {
  Json j;
  j["campaign_id"] = c.campaign_id();
  j["status"] = c.status();
  j["baseline_latency_ms"] = c.baseline_latency_ms();
  j["best_latency_ms"] = c.best_latency_ms();
  j["promotions"] = c.promotions();
  j["candidates_evaluated"] = c.candidates_evaluated();
  const v1::BudgetUsage& u = c.used();
  j["budget_used"] = {{"candidates", u.candidates()},
                      {"agent_evaluations", u.agent_evaluations()},
                      {"rounds", u.rounds()},
                      {"wall_clock_s", u.wall_clock_s()},
                      {"cost_usd", u.cost_usd()},
                      {"gpu_seconds", u.gpu_seconds()}};
  return j;
}

Json CampaignJson(const v1::Campaign& c) { return ProtoToJson(c); }

std::string CampaignText(const v1::Campaign& c, int64_t now_unix_ms) {
  std::string out =
      absl::StrCat("campaign ", c.campaign_id(), " (", c.name(), ") on ", c.definition(), "\n");
  absl::StrAppend(&out, "status     ", c.status(), c.reason().empty() ? "" : ": ", c.reason(),
                  "\n");
  if (!c.owner().empty()) absl::StrAppend(&out, "owner      ", c.owner(), "\n");
  absl::StrAppend(&out, "round      ", c.round(), " (", c.pass(), "), agent ", c.agent(), "\n");
  absl::StrAppend(&out, "baseline   ", Ms(c.baseline_latency_ms()), "\n");
  absl::StrAppend(&out, "best       ", Ms(c.best_latency_ms()));
  if (c.baseline_latency_ms() > 0 && c.best_latency_ms() > 0) {
    absl::StrAppend(&out, absl::StrFormat("  (%.2fx the baseline)",
                                          c.baseline_latency_ms() / c.best_latency_ms()));
  }
  absl::StrAppend(&out, "\n");
  const v1::BudgetUsage& u = c.used();
  absl::StrAppend(&out,
                  absl::StrFormat("used       %d candidates (%d duplicates skipped, %d failed), "
                                  "%d evaluations by agents, %d rounds, %.0f s, %.4f USD, "
                                  "%.1f GPU-s\n",
                                  u.candidates(), c.duplicates(), c.failures(),
                                  u.agent_evaluations(), u.rounds(),
                                  u.wall_clock_s(), u.cost_usd(), u.gpu_seconds()));
  absl::StrAppend(&out, "budget     left: ", Left(c), "\n");
  absl::StrAppend(&out, "promotions ", c.promotions(), "\n");
  for (const v1::Promotion& p : c.promotion_history()) {
    absl::StrAppend(&out, absl::StrFormat("  round %-3d %-32s %s -> %s (noise %.2f%%, agent %s)\n",
                                          p.round(), p.solution_name(), Ms(p.previous_latency_ms()),
                                          Ms(p.latency_ms()), p.noise() * 100, p.agent()));
  }
  if (c.harnesses_size() > 0) {
    if (now_unix_ms == 0) {
      now_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    }
    absl::StrAppend(&out, "harnesses\n");
    for (const v1::HarnessHealth& h : c.harnesses()) {
      std::string line = absl::StrFormat("  %-21s %-8s for %-12s %s, %s given up", h.address(),
                                         h.state(), Span(now_unix_ms - h.since_unix_ms()),
                                         Plural(h.verdicts(), "verdict"), std::to_string(h.given_up()));
      if (h.in_flight() > 0) absl::StrAppend(&line, ", ", h.in_flight(), " in flight");
      if (h.state() != "healthy") {
        absl::StrAppend(&line, "; ",
                        h.last_answer_unix_ms() > 0
                            ? absl::StrCat("last answer ", Span(now_unix_ms - h.last_answer_unix_ms()),
                                           " ago")
                            : std::string("never answered"));
        if (!h.last_error().empty()) absl::StrAppend(&line, "; ", h.last_error());
      }
      absl::StrAppend(&out, line, "\n");
    }
  }
  return out;
}

std::string CampaignTable(const v1::ListCampaignsResponse& list) {
  std::string out = absl::StrFormat("%-22s %-24s %-10s %6s %12s %12s %5s\n", "CAMPAIGN", "NAME",
                                    "STATUS", "ROUND", "BASELINE", "BEST", "PROM");
  for (const v1::Campaign& c : list.campaigns()) {
    absl::StrAppend(&out, absl::StrFormat("%-22s %-24s %-10s %6d %12s %12s %5d\n", c.campaign_id(),
                                          c.name().substr(0, 24), c.status(), c.round(),
                                          Ms(c.baseline_latency_ms()), Ms(c.best_latency_ms()),
                                          c.promotions()));
  }
  return out;
}

}  // namespace kiln::cli
