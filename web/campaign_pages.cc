// The controller's console pages: its campaigns, each with its best-latency and budget charts.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/common/xml_escape.h"
#include "web/page_parts.h"
#include "web/web_pages.h"

namespace kiln::web {

std::string CampaignsBody(const v1::ListCampaignsResponse& list) {
  if (list.campaigns().empty()) return "<p class=\"note\">No campaigns yet.</p>\n";
  std::string out = absl::StrCat(
      "<table>", Header({"campaign", "name", "definition", "owner", "status", "round",
                         "baseline", "best", "promotions", "candidates", "created"}));
  for (const v1::Campaign& c : list.campaigns()) {
    absl::StrAppend(
        &out, Row({absl::StrCat("<a href=\"/campaigns/", XmlEscape(c.campaign_id()), "\">",
                                XmlEscape(c.campaign_id()), "</a>"),
                   XmlEscape(c.name()), XmlEscape(c.definition()), XmlEscape(c.owner()),
                   absl::StrCat("<span class=\"campaign-", XmlEscape(c.status()), "\">",
                                XmlEscape(c.status()), "</span>"),
                   absl::StrCat(c.round()), Ms(c.baseline_latency_ms()), Ms(c.best_latency_ms()),
                   absl::StrCat(c.promotions()), absl::StrCat(c.candidates_evaluated()),
                   Time(c.created_unix_ms())},
                  {false, false, false, false, false, true, true, true, true, true}));
  }
  return out + "</table>\n";
}

std::string BestLatencyChart(const v1::Campaign& c) {
  // (round, latency) after each round: the baseline from round 0, then each promotion.
  std::vector<std::pair<int, double>> steps;
  if (c.baseline_latency_ms() > 0) steps.push_back({0, c.baseline_latency_ms()});
  for (const v1::Promotion& p : c.promotion_history()) {
    if (p.latency_ms() > 0) steps.push_back({p.round(), p.latency_ms()});
  }
  if (steps.empty()) return "";
  const int last_round = std::max(c.round(), steps.back().first);
  double lo = steps[0].second, hi = steps[0].second;
  for (const auto& [r, ms] : steps) {
    lo = std::min(lo, ms);
    hi = std::max(hi, ms);
  }
  lo /= 1.3;
  hi *= 1.3;
  const double x0 = 90, x1 = 660, y0 = 20, y1 = 220;
  auto x = [&](double round) { return x0 + round / std::max(1, last_round) * (x1 - x0); };
  auto y = [&](double ms) {
    const double t = (std::log10(ms) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return y1 - t * (y1 - y0);
  };
  std::string points;
  for (size_t i = 0; i < steps.size(); ++i) {
    const double end = i + 1 < steps.size() ? steps[i + 1].first : last_round;
    absl::StrAppendFormat(&points, "%.1f,%.1f %.1f,%.1f ", x(steps[i].first), y(steps[i].second),
                          x(end), y(steps[i].second));
  }
  std::string out =
      "<svg class=\"chart best\" xmlns=\"http://www.w3.org/2000/svg\" width=\"700\" "
      "height=\"260\" role=\"img\" aria-label=\"best latency per round\">";
  for (double tick : {lo * 1.3, hi / 1.3}) {
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
                          "stroke=\"#dde1e8\"/><text x=\"%.0f\" y=\"%.1f\" "
                          "text-anchor=\"end\">%.4g ms</text>",
                          x0, y(tick), x1, y(tick), x0 - 6, y(tick) + 4, tick);
  }
  absl::StrAppendFormat(&out,
                        "<polyline class=\"best\" points=\"%s\" fill=\"none\" stroke=\"#4e79a7\" "
                        "stroke-width=\"3\"/>",
                        points);
  for (const v1::Promotion& p : c.promotion_history()) {
    if (p.latency_ms() <= 0) continue;
    absl::StrAppendFormat(&out,
                          "<circle class=\"promotion\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
                          "fill=\"#f28e2b\"><title>round %d: %s, %.4f ms (was %.4f ms)</title>"
                          "</circle>",
                          x(p.round()), y(p.latency_ms()), p.round(), XmlEscape(p.solution_name()),
                          p.latency_ms(), p.previous_latency_ms());
  }
  for (int r = 0; r <= last_round; r += std::max(1, last_round / 10)) {
    absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>",
                          x(r), y1 + 18, r);
  }
  absl::StrAppendFormat(&out,
                        "<text x=\"%.0f\" y=\"252\" text-anchor=\"middle\">round (the "
                        "incumbent's latency after it; dots: promotions)</text></svg>\n",
                        (x0 + x1) / 2);
  return out;
}

std::string BudgetChart(const v1::Campaign& c) {
  const v1::Budget& b = c.budget();
  const v1::BudgetUsage& u = c.used();
  struct Item {
    std::string label;
    double used, limit;
  };
  std::vector<Item> items;
  if (b.max_candidates() > 0) {
    items.push_back({"candidates", static_cast<double>(u.candidates() + u.agent_evaluations()),
                     static_cast<double>(b.max_candidates())});
  }
  if (b.max_rounds() > 0) items.push_back({"rounds", double(u.rounds()), double(b.max_rounds())});
  if (b.wall_clock_s() > 0) items.push_back({"wall clock s", u.wall_clock_s(), b.wall_clock_s()});
  if (b.max_cost_usd() > 0) items.push_back({"cost USD", u.cost_usd(), b.max_cost_usd()});
  if (b.max_gpu_seconds() > 0) items.push_back({"GPU s", u.gpu_seconds(), b.max_gpu_seconds()});
  if (items.empty()) return "<p class=\"note\">No budget limits.</p>\n";
  const double x0 = 120, x1 = 560, row = 26;
  std::string out = absl::StrFormat(
      "<svg class=\"chart budget\" xmlns=\"http://www.w3.org/2000/svg\" width=\"700\" "
      "height=\"%.0f\" role=\"img\" aria-label=\"budget used\">",
      10 + row * items.size());
  double y = 6;
  for (const Item& it : items) {
    const double share = std::clamp(it.used / it.limit, 0.0, 1.0);
    absl::StrAppendFormat(&out,
                          "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text><rect "
                          "x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"#eef0f4\"/>"
                          "<rect class=\"used\" x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" "
                          "height=\"16\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.1f\">%.4g of %.4g "
                          "(%.0f%%)</text>",
                          x0 - 6, y + 13, XmlEscape(it.label), x0, y, x1 - x0, x0, y,
                          std::max(1.0, share * (x1 - x0)), share >= 1 ? "#b42318" : "#4e79a7",
                          x1 + 6, y + 13, it.used, it.limit, share * 100);
    y += row;
  }
  return out + "</svg>\n";
}

std::string CampaignBody(const v1::Campaign& c) {
  std::string out = absl::StrCat(
      "<p><span class=\"campaign-", XmlEscape(c.status()), "\">", XmlEscape(c.status()), "</span>",
      c.reason().empty() ? "" : absl::StrCat(": ", XmlEscape(c.reason())), " &middot; ",
      XmlEscape(c.name()), " on ", XmlEscape(c.definition()), " &middot; owner ", XmlEscape(c.owner()),
      " &middot; round ", c.round(), " (", XmlEscape(c.pass()), "), agent ", XmlEscape(c.agent()),
      " &middot; created ", Time(c.created_unix_ms()), "</p>\n");
  absl::StrAppend(&out, "<p>baseline ", Ms(c.baseline_latency_ms()), " &middot; best ",
                  Ms(c.best_latency_ms()),
                  c.baseline_latency_ms() > 0 && c.best_latency_ms() > 0
                      ? absl::StrFormat(" (%.2fx the baseline)",
                                        c.baseline_latency_ms() / c.best_latency_ms())
                      : "",
                  " &middot; ", c.candidates_evaluated(), " candidates evaluated, ",
                  c.duplicates(), " duplicates, ", c.failures(), " failures</p>\n");
  absl::StrAppend(&out, "<h2>Best latency per round</h2>\n", BestLatencyChart(c),
                  "<h2>Budget</h2>\n", BudgetChart(c));
  if (!c.promotion_history().empty()) {
    absl::StrAppend(&out, "<h2>Promotions</h2><table>",
                    Header({"round", "solution", "agent", "latency", "was", "noise"}));
    for (const v1::Promotion& p : c.promotion_history()) {
      absl::StrAppend(&out, Row({absl::StrCat(p.round()), NameCell(p.solution_name()),
                                 XmlEscape(p.agent()), Ms(p.latency_ms()),
                                 Ms(p.previous_latency_ms()),
                                 absl::StrFormat("%.2f%%", p.noise() * 100)},
                                {true, false, false, true, true, true}));
    }
    absl::StrAppend(&out, "</table>\n");
  }
  if (!c.rounds().empty()) {
    absl::StrAppend(&out, "<h2>Rounds</h2><table>",
                    Header({"round", "pass", "agent", "direction", "outcome"}));
    for (const v1::RoundSummary& r : c.rounds()) {
      absl::StrAppend(&out, Row({absl::StrCat(r.round()), XmlEscape(r.pass()), XmlEscape(r.agent()),
                                 XmlEscape(r.direction()), XmlEscape(r.outcome())},
                                {true}));
    }
    absl::StrAppend(&out, "</table>\n");
  }
  if (!c.candidates().empty()) {
    absl::StrAppend(&out, "<h2>Candidates</h2><table>",
                    Header({"round", "agent", "solution", "hash", "state", "verdict", "latency"}));
    for (const v1::CandidateSummary& k : c.candidates()) {
      absl::StrAppend(
          &out, Row({absl::StrCat(k.round()), XmlEscape(k.agent()), NameCell(k.solution_name()),
                     XmlEscape(k.hash().substr(0, 12)), XmlEscape(k.state()),
                     k.status().empty() ? "-"
                                        : absl::StrCat("<span class=\"", XmlEscape(k.status()), "\">",
                                                       XmlEscape(k.status()), "</span>"),
                     Ms(k.mean_latency_ms())},
                    {true, false, false, false, false, false, true}));
    }
    absl::StrAppend(&out, "</table>\n");
  }
  if (!c.harnesses().empty()) {
    absl::StrAppend(&out, "<h2>Harnesses</h2><table>",
                    Header({"harness", "state", "since", "verdicts", "given up", "in flight",
                            "last error"}));
    for (const v1::HarnessHealth& h : c.harnesses()) {
      absl::StrAppend(&out, Row({XmlEscape(h.address()), XmlEscape(h.state()), Time(h.since_unix_ms()),
                                 absl::StrCat(h.verdicts()), absl::StrCat(h.given_up()),
                                 absl::StrCat(h.in_flight()), XmlEscape(h.last_error())},
                                {false, false, false, true, true, true}));
    }
    absl::StrAppend(&out, "</table>\n");
  }
  return out;
}

}  // namespace kiln::web
