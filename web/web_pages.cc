#include "web/web_pages.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "harness/common/xml_escape.h"
#include "harness/model/dtype.h"
#include "harness/model/run_team.h"
#include "harness/model/speedup_interval.h"
#include "harness/profile/profile_proto.h"
#include "harness/verify/own_work.h"
#include "report/table.h"
#include "web/page_parts.h"

namespace kiln::web {

namespace {

constexpr char kStyle[] = R"css(
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:10px 24px;display:flex;gap:24px;align-items:center}
header a{color:#cfd6e4;text-decoration:none}header a.current{color:#fff;font-weight:600}
header .who{margin-left:auto;color:#9aa4b8}main{padding:16px 24px;max-width:1200px}
table{border-collapse:collapse;background:#fff;margin:8px 0 16px;max-width:100%}
th,td{border:1px solid #dde1e8;padding:4px 8px;text-align:left;vertical-align:top}
td .name{overflow-wrap:anywhere}
th{background:#eef0f4}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.PASSED{color:#13795b;font-weight:600}.REJECTED,.INCORRECT_NUMERICAL,.INCORRECT_SHAPE,
.INCORRECT_DTYPE,.RUNTIME_ERROR,.COMPILE_ERROR,.TIMEOUT{color:#b42318;font-weight:600}
.diff .add{color:#13795b}.diff .del{color:#b42318}.diff .hunk{color:#5b6474}
pre{background:#fff;border:1px solid #dde1e8;padding:8px;overflow:auto;max-height:480px}
.campaign-completed{color:#13795b;font-weight:600}.campaign-failed{color:#b42318;font-weight:600}
.note{color:#5b6474}.warn{color:#b54708}svg{background:#fff;border:1px solid #dde1e8}
)css";

// x position of `ms` on a log axis from lo to hi mapped to [x0, x1].
double LogX(double ms, double lo, double hi, double x0, double x1) {
  const double t = (std::log10(ms) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  return x0 + std::clamp(t, 0.0, 1.0) * (x1 - x0);
}

// What a box is drawn from: the raw samples' order statistics, or the trace's summary.
struct BoxStats {
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
  const std::vector<double>* samples = nullptr;  // drawn as dots when set
};

// The q-quantile of sorted `v` (linear interpolation between closest ranks).
double Quantile(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  return i + 1 < v.size() ? v[i] + (pos - static_cast<double>(i)) * (v[i + 1] - v[i]) : v[i];
}

BoxStats StatsOf(const v1::TimingResult& t, const std::vector<double>* sorted) {
  BoxStats b;
  if (sorted != nullptr && !sorted->empty()) {
    b = {sorted->front(), Quantile(*sorted, 0.25), Quantile(*sorted, 0.5), Quantile(*sorted, 0.75),
         sorted->back(), sorted};
    return b;
  }
  b.min = t.min_ms() > 0 ? t.min_ms() : t.latency_ms();
  b.max = t.max_ms() > 0 ? t.max_ms() : t.latency_ms();
  b.q1 = t.q1_ms() > 0 ? t.q1_ms() : b.min;
  b.q3 = t.q3_ms() > 0 ? t.q3_ms() : b.max;
  b.median = t.median_ms() > 0 ? t.median_ms() : t.latency_ms();
  return b;
}

// One box (q1..q3), whiskers (min..max) and median of `s` in row `y` (height h); with raw
// samples, every sample as a dot across the row (a deterministic spread so that equal values
// stay visible).
std::string Box(const BoxStats& s, double lo, double hi, double x0, double x1, double y, double h,
                const char* fill, const std::string& label) {
  const double min = s.min, max = s.max, q1 = s.q1, q3 = s.q3, med = s.median;
  const double mid = y + h / 2;
  const double bx = LogX(q1, lo, hi, x0, x1);
  const double bw = std::max(2.0, LogX(q3, lo, hi, x0, x1) - bx);
  std::string out = absl::StrFormat(
      "<line class=\"whisker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#5b6474\"/>",
      LogX(min, lo, hi, x0, x1), mid, LogX(max, lo, hi, x0, x1), mid);
  absl::StrAppendFormat(&out,
                        "<rect class=\"box\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "fill=\"%s\" stroke=\"#1d2330\"><title>%s: median %.4f ms, quartiles "
                        "%.4f..%.4f ms, range %.4f..%.4f ms</title></rect>",
                        bx, y, bw, h, fill, XmlEscape(label), med, q1, q3, min, max);
  const double mx = LogX(med, lo, hi, x0, x1);
  absl::StrAppendFormat(&out,
                        "<line class=\"median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                        "stroke=\"#1d2330\" stroke-width=\"2\"/>",
                        mx, y, mx, y + h);
  if (s.samples != nullptr) {
    // At most 2000 dots: beyond that, every k-th sample in sorted order (the box and whiskers
    // still come from all of them).
    const size_t n = s.samples->size();
    const size_t step = std::max<size_t>(1, (n + 1999) / 2000);
    absl::StrAppendFormat(&out, "<g class=\"samples\" fill=\"%s\" fill-opacity=\"0.45\"><title>%s: %d "
                                "samples</title>",
                          fill, XmlEscape(label), n);
    for (size_t i = 0; i < n; i += step) {
      const double jitter = static_cast<double>((i * 2654435761u) % 1000) / 1000.0;
      absl::StrAppendFormat(&out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.3\"/>",
                            LogX((*s.samples)[i], lo, hi, x0, x1), y + 2 + jitter * (h - 4));
    }
    out += "</g>";
  }
  return out;
}

}  // namespace

std::string UrlEncode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

std::string Page(const std::string& title, const std::string& nav, const std::string& body,
                 const std::string& viewer, Site site) {
  using Links = std::vector<std::tuple<std::string, std::string, std::string>>;
  const Links harness = {{"node", "/", "Node"},
                         {"definitions", "/definitions", "Definitions"},
                         {"runs", "/runs", "Runs"}};
  const Links controller = {{"campaigns", "/", "Campaigns"},
                            {"definitions", "/definitions", "Definitions"},
                            {"runs", "/runs", "Runs"}};
  std::string links;
  for (const auto& [key, href, label] : site == Site::kController ? controller : harness) {
    absl::StrAppend(&links, "<a href=\"", href, "\"", key == nav ? " class=\"current\"" : "",
                    ">", label, "</a>");
  }
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", XmlEscape(title),
      " - kiln</title><style>", kStyle, "</style></head><body><header><strong>",
      site == Site::kController ? "kiln-controller" : "kiln", "</strong>",
      links, "<span class=\"who\">",
      viewer.empty()                ? std::string("<a href=\"/login\">log in</a>")
      : viewer == "local (operator)" ? XmlEscape(viewer)
                                     : absl::StrCat(XmlEscape(viewer),
                                                    " &middot; <a href=\"/logout\">log out</a>"),
      "</span></header><main><h1>", XmlEscape(title), "</h1>\n", body, "</main></body></html>\n");
}

std::string NodeBody(const v1::NodeInfo& node) {
  std::string out = absl::StrCat("<p>kiln ", XmlEscape(node.version()), " &middot; default mode ",
                                 XmlEscape(node.default_mode()), " &middot; default backend ",
                                 XmlEscape(node.default_backend()), " &middot; started ",
                                 Time(node.started_unix_ms()), "</p>\n");
  if (!node.sandbox().empty()) {
    absl::StrAppend(&out, "<p><strong>Sandbox:</strong> ", XmlEscape(node.sandbox()), "</p>\n");
  }
  // Whether `kiln profile` can take profiles here, and why not.
  absl::StrAppend(&out, "<p><strong>Nsight Compute:</strong> ",
                  XmlEscape(node.profiling().empty() ? "not reported by this harness"
                                                     : node.profiling()),
                  "</p>\n");
  absl::StrAppend(&out, "<h2>Queue</h2><table>", Header({"queued", "running", "runs archived"}),
                  Row({absl::StrCat(node.queue_depth()), absl::StrCat(node.running()),
                       absl::StrCat(node.runs_archived())},
                      {true, true, true}),
                  "</table>\n<h2>Devices</h2><table>",
                  Header({"backend", "index", "device", "PCI bus", "busy"}));
  for (const v1::DeviceInfo& d : node.devices()) {
    absl::StrAppend(&out, Row({XmlEscape(d.backend()), absl::StrCat(d.index()), XmlEscape(d.name()),
                               XmlEscape(d.pci_bus_id()), d.busy() ? "yes" : "no"}));
  }
  absl::StrAppend(&out, "</table>\n");
  if (!node.unavailable_backends().empty()) {
    absl::StrAppend(&out, "<h2>Unavailable backends</h2><table>", Header({"backend", "why"}));
    std::vector<std::pair<std::string, std::string>> sorted(node.unavailable_backends().begin(),
                                                            node.unavailable_backends().end());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [b, why] : sorted) absl::StrAppend(&out, Row({XmlEscape(b), XmlEscape(why)}));
    absl::StrAppend(&out, "</table>\n");
  }
  absl::StrAppend(&out, "<h2>Languages and toolchains</h2><table>", Header({"name", "status"}));
  std::vector<std::pair<std::string, std::string>> tools(node.languages().begin(),
                                                         node.languages().end());
  std::sort(tools.begin(), tools.end());
  std::vector<std::pair<std::string, std::string>> chains(node.toolchains().begin(),
                                                          node.toolchains().end());
  std::sort(chains.begin(), chains.end());
  for (const auto& [name, what] : tools) {
    absl::StrAppend(&out, Row({absl::StrCat("language ", XmlEscape(name)), XmlEscape(what)}));
  }
  for (const auto& [name, what] : chains) absl::StrAppend(&out, Row({XmlEscape(name), XmlEscape(what)}));
  absl::StrAppend(&out, "</table>\n");
  return out;
}

std::string DefinitionsBody(const v1::ListDefinitionsResponse& list) {
  if (list.definitions().empty()) return "<p class=\"note\">No definitions are registered.</p>\n";
  std::string out = absl::StrCat("<table>", Header({"definition", "op type", "workloads",
                                                    "reference", "notes"}));
  for (const v1::DefinitionSummary& d : list.definitions()) {
    std::string notes;
    if (d.builtin()) notes = "built in";
    if (!d.integrity_warning().empty()) {
      absl::StrAppend(&notes, notes.empty() ? "" : "; ", "<span class=\"warn\">",
                      XmlEscape(d.integrity_warning()), "</span>");
    }
    if (!d.cannot_evaluate().empty()) {
      absl::StrAppend(&notes, notes.empty() ? "" : "; ", "cannot be evaluated here: ",
                      XmlEscape(d.cannot_evaluate()));
    }
    absl::StrAppend(&out, Row({DefinitionLink(d.name()), XmlEscape(d.op_type()),
                               absl::StrCat(d.workload_count()),
                               d.has_native_reference() ? "native and Python" : "Python", notes},
                              {false, false, true}));
  }
  return out + "</table>\n";
}

std::string ScoreChart(const v1::Leaderboard& board) {
  double hi = 1.0;
  int scored = 0;
  for (const v1::LeaderboardEntry& e : board.entries()) {
    if (e.score() <= 0) continue;
    ++scored;
    hi = std::max({hi, e.score(), e.score_ci95_high()});
  }
  if (scored == 0) return "";
  hi *= 1.1;
  // Labels are 13 px: team names on the left (cut to kNameChars with the whole name in a
  // title), each score right of its bar and interval, "1x (reference)" under the rows; the
  // right margin holds a score label beside the longest bar.
  constexpr double kWidth = 700, x0 = 180, x1 = 580, row = 26;
  constexpr size_t kNameChars = 20;
  const double height = 40 + row * board.entries_size();
  std::string out = absl::StrFormat(
      "<svg class=\"chart score\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" font-size=\"13\" role=\"img\" aria-label=\"score per team\">",
      kWidth, height);
  auto x = [&](double v) { return x0 + v / hi * (x1 - x0); };
  double y = 10;
  for (const v1::LeaderboardEntry& e : board.entries()) {
    const std::string& name = e.principal();
    const std::string shown =
        name.size() > kNameChars ? absl::StrCat(name.substr(0, kNameChars - 1), "…") : name;
    absl::StrAppendFormat(&out,
                          "<text class=\"team\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">"
                          "<title>%s</title>%s</text>",
                          x0 - 6, y + 14, XmlEscape(name), XmlEscape(shown));
    if (e.score() > 0) {
      absl::StrAppendFormat(&out,
                            "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                            "height=\"18\" fill=\"#4e79a7\"><title>%s: score %.3fx (95%% "
                            "interval %.3f..%.3f)</title></rect>",
                            x0, y, x(e.score()) - x0, XmlEscape(name), e.score(),
                            e.score_ci95_low(), e.score_ci95_high());
      double right = x(e.score());
      if (e.score_ci95_high() > e.score_ci95_low()) {
        absl::StrAppendFormat(&out,
                              "<line class=\"interval\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                              "y2=\"%.1f\" stroke=\"#1d2330\"/>",
                              x(e.score_ci95_low()), y + 9, x(e.score_ci95_high()), y + 9);
        right = std::max(right, x(e.score_ci95_high()));
      }
      absl::StrAppendFormat(&out, "<text class=\"score\" x=\"%.1f\" y=\"%.1f\">%.2fx</text>",
                            right + 4, y + 14, e.score());
    }
    y += row;
  }
  // The 1x line spans the rows; its label sits below them, centred on the line.
  absl::StrAppendFormat(&out,
                        "<line class=\"one\" x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"%.1f\" "
                        "stroke=\"#b42318\" stroke-dasharray=\"4 3\"/><text class=\"one\" "
                        "x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#b42318\">1x "
                        "(reference)</text></svg>\n",
                        x(1.0), x(1.0), y, x(1.0), y + 18);
  return out;
}

std::string DefinitionBody(const v1::DefinitionDetail& detail, const v1::Leaderboard& board) {
  const v1::Definition& d = detail.definition();
  std::string out = absl::StrCat("<p>", XmlEscape(d.op_type()), " &middot; ",
                                 detail.summary().workload_count(), " workloads &middot; ",
                                 "<a href=\"/runs?definition=", XmlEscape(d.name()),
                                 "\">its runs</a> &middot; <a href=\"/definitions/",
                                 XmlEscape(d.name()), "/report\">report (fast_p curves)</a></p>\n");
  if (!d.description().empty()) absl::StrAppend(&out, "<p>", XmlEscape(d.description()), "</p>\n");
  absl::StrAppend(&out, "<h2>Leaderboard (", XmlEscape(board.rule()), ", mode ",
                  XmlEscape(board.mode()), ")</h2>\n");
  if (board.entries().empty()) {
    absl::StrAppend(&out, "<p class=\"note\">No ranked runs yet.</p>\n");
  } else {
    absl::StrAppend(&out, ScoreChart(board), "<table>",
                    Header({"#", "team", "run", "solution", "status", "score",
                            "95% interval", "mean latency", "passed workloads"}));
    int rank = 0;
    for (const v1::LeaderboardEntry& e : board.entries()) {
      absl::StrAppend(
          &out,
          Row({absl::StrCat(++rank), XmlEscape(e.principal()), RunLink(e.run_id()),
               NameCell(e.solution_name()), Status(e.status()), absl::StrFormat("%.3fx", e.score()),
               absl::StrFormat("%.3f..%.3f%s", e.score_ci95_low(), e.score_ci95_high(),
                               WithinNoise({e.score_ci95_low(), e.score(), e.score_ci95_high()},
                                           kDefaultNoiseFloor)
                                   ? " (tie)"
                                   : ""),
               Ms(e.mean_latency_ms()),
               absl::StrCat(e.passed_workloads(), " / ", e.workload_count())},
              {true, false, false, false, false, true, true, true, true}));
    }
    absl::StrAppend(&out, "</table>\n<p class=\"note\">tie: the score's 95% interval, widened by "
                          "the noise floor (",
                    cli::FormatNoiseFloor(kDefaultNoiseFloor),
                    ", the reference timed against itself in two processes), holds 1x: not told "
                    "apart from the reference.</p>\n");
  }
  absl::StrAppend(&out, "<h2>Tensors</h2><table>", Header({"", "name", "dtype", "shape"}));
  auto tensors = [&](const char* kind, const auto& list) {
    for (const v1::TensorSpec& t : list) {
      std::string shape;
      for (const std::string& s : t.shape()) absl::StrAppend(&shape, shape.empty() ? "" : ", ", s);
      absl::StrAppend(&out, Row({kind, XmlEscape(t.name()), XmlEscape(DTypeName(t.dtype())),
                                 absl::StrCat("[", XmlEscape(shape), "]")}));
    }
  };
  tensors("input", d.inputs());
  tensors("output", d.outputs());
  absl::StrAppend(&out, "</table>\n");
  if (!d.reference().empty()) {
    absl::StrAppend(&out, "<h2>Reference</h2><pre>", XmlEscape(d.reference()), "</pre>\n");
  }
  return out;
}

std::string RunsBody(const v1::ListRunsResponse& runs, const std::string& query) {
  // Through a kiln-controller: the harnesses whose runs are not in this page.
  std::string left_out;
  for (const std::string& h : runs.left_out()) {
    absl::StrAppend(&left_out, "<p class=\"note left-out\">Left out: the runs held by harness ",
                    XmlEscape(h), "</p>\n");
  }
  if (runs.runs().empty()) return "<p class=\"note\">No runs match.</p>\n" + left_out;
  std::string out = absl::StrCat(left_out, "<table>", Header({"run", "definition", "solution", "team",
                                                    "status", "mode", "mean latency",
                                                    "mean speedup", "workloads", "created"}));
  for (const v1::RunSummary& r : runs.runs()) {
    absl::StrAppend(
        &out, Row({RunLink(r.run_id()), DefinitionLink(r.definition()), NameCell(r.solution_name()),
                   XmlEscape(r.principal()),
                   r.state() == v1::RUN_DONE ? Status(r.status())
                                             : XmlEscape(v1::RunState_Name(r.state())),
                   XmlEscape(r.mode()), Ms(r.mean_latency_ms()),
                   r.mean_speedup() > 0 ? absl::StrFormat("%.3fx", r.mean_speedup()) : "-",
                   absl::StrCat(r.workload_count()), Time(r.created_unix_ms())},
                  {false, false, false, false, false, false, true, true, true}));
  }
  absl::StrAppend(&out, "</table>\n");
  if (!runs.next_page_token().empty()) {
    absl::StrAppend(&out, "<p><a class=\"next\" href=\"/runs?", query,
                    query.empty() ? "" : "&amp;", "page_token=", UrlEncode(runs.next_page_token()),
                    "\">next page</a></p>\n");
  }
  return out;
}

std::string LatencyChart(const v1::Run& run, const RunSamples& samples) {
  double lo = 0, hi = 0;
  int timed = 0;
  // Each row's raw samples, sorted, by artifact name.
  std::map<std::string, std::vector<double>> sorted;
  for (const auto& [name, values] : samples) {
    std::vector<double> v;
    for (double x : values) {
      if (x > 0 && std::isfinite(x)) v.push_back(x);
    }
    std::sort(v.begin(), v.end());
    if (!v.empty()) sorted.emplace(name, std::move(v));
  }
  auto raw = [&sorted](const std::string& name) -> const std::vector<double>* {
    auto it = sorted.find(name);
    return it == sorted.end() ? nullptr : &it->second;
  };
  auto widen = [&](const v1::TimingResult& t, const std::vector<double>* s) {
    if (t.latency_ms() <= 0) return;
    const BoxStats b = StatsOf(t, s);
    for (double v : {b.min, b.max, t.latency_ms()}) {
      if (v <= 0) continue;
      lo = lo == 0 ? v : std::min(lo, v);
      hi = std::max(hi, v);
    }
  };
  for (const v1::Trace& t : run.traces()) {
    if (t.kiln().timing().latency_ms() <= 0) continue;
    ++timed;
    const int i = t.kiln().workload_index();
    widen(t.kiln().timing(), raw(absl::StrCat("w", i)));
    widen(t.kiln().reference_timing(), raw(absl::StrCat("w", i, "_reference")));
  }
  if (timed == 0) return "";
  lo /= 1.25;
  hi *= 1.25;
  if (hi <= lo) hi = lo * 2;
  const double x0 = 120, x1 = 680, row = 44;
  const double height = 40 + row * timed;
  std::string out = absl::StrFormat(
      "<svg class=\"chart latency\" xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" "
      "height=\"%.0f\" role=\"img\" aria-label=\"latency per workload\">",
      height);
  double y = 8;
  for (const v1::Trace& t : run.traces()) {
    if (t.kiln().timing().latency_ms() <= 0) continue;
    absl::StrAppendFormat(&out, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">workload %d</text>",
                          x0 - 6, y + 22, t.kiln().workload_index() + 1);  // as the CLI
    const int i = t.kiln().workload_index();
    absl::StrAppend(&out, Box(StatsOf(t.kiln().timing(), raw(absl::StrCat("w", i))), lo, hi, x0,
                              x1, y, 16, "#4e79a7", "candidate"));
    if (t.kiln().reference_timing().latency_ms() > 0) {
      absl::StrAppend(&out, Box(StatsOf(t.kiln().reference_timing(),
                                        raw(absl::StrCat("w", i, "_reference"))),
                                lo, hi, x0, x1, y + 20, 16, "#f28e2b", "reference"));
    }
    y += row;
  }
  // Decades of the log axis.
  for (double tick = std::pow(10.0, std::floor(std::log10(lo))); tick <= hi; tick *= 10) {
    if (tick < lo) continue;
    const double x = LogX(tick, lo, hi, x0, x1);
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dde1e8\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g ms</text>",
                          x, x, y, x, y + 16, tick);
  }
  absl::StrAppendFormat(&out,
                        "<rect x=\"%.0f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"#4e79a7\"/>"
                        "<text x=\"%.0f\" y=\"%.1f\">candidate</text><rect x=\"%.0f\" y=\"%.1f\" "
                        "width=\"12\" height=\"10\" fill=\"#f28e2b\"/><text x=\"%.0f\" "
                        "y=\"%.1f\">reference</text></svg>\n",
                        x0, y + 22, x0 + 16, y + 31, x0 + 100, y + 22, x0 + 116, y + 31);
  return out;
}

namespace {

// " · author NAME" for a solution that names its author, else "": the author is what the
// solution says of itself, shown beside the team (the principal) and never ranked by.
std::string AuthorText(const v1::Run& run) {
  const std::string author = AuthorOf(run);
  return author.empty() ? "" : absl::StrCat(" &middot; author ", XmlEscape(author));
}

}  // namespace

std::string RunBody(const v1::Run& run, const RunSamples& samples) {
  std::string out = absl::StrCat(
      "<p>", run.state() == v1::RUN_DONE ? Status(run.status())
                                         : XmlEscape(v1::RunState_Name(run.state())),
      " &middot; definition ", DefinitionLink(run.definition()), " &middot; solution ",
      XmlEscape(run.solution_name()), " &middot; team ",
      XmlEscape(TeamOf(run)),
      AuthorText(run), " &middot; mode ",
      XmlEscape(run.mode()), " &middot; backend ", XmlEscape(run.backend()),
      run.device_name().empty() ? "" : absl::StrCat(" (", XmlEscape(run.device_name()), ")"),
      " &middot; created ", Time(run.created_unix_ms()), "</p>\n");
  // A run in flight says whose work is running ("reference for workload 1/3: timing").
  if (run.state() != v1::RUN_DONE && !run.progress().empty()) {
    absl::StrAppend(&out, "<p class=\"note\">Now: ", XmlEscape(run.progress()), "</p>\n");
  }
  if (!run.reason().empty()) absl::StrAppend(&out, "<p><strong>Why:</strong> ", XmlEscape(run.reason()), "</p>\n");
  absl::StrAppend(&out, "<h2>Stages</h2><table>",
                  Header({"queued", "compile", "verify", "timing", "compile cache"}),
                  Row({absl::StrFormat("%.3f s", run.queued_s()),
                       absl::StrFormat("%.3f s", run.compile_s()),
                       absl::StrFormat("%.3f s", run.verify_s()),
                       absl::StrFormat("%.3f s", run.timing_s()),
                       run.compile_cache_hit() ? "hit" : "miss"},
                      {true, true, true, true}),
                  "</table>\n<h2>Workloads</h2>\n", LatencyChart(run, samples), "<table>",
                  Header({"#", "workload", "status", "latency", "reference", "speedup",
                          "max abs error", "own kernels", "why"}));
  for (const v1::Trace& t : run.traces()) {
    const v1::TraceDetail& k = t.kiln();
    const double lat = k.timing().latency_ms(), ref = k.reference_timing().latency_ms();
    std::string why = k.reason();
    for (const std::string& w : k.warnings()) absl::StrAppend(&why, why.empty() ? "" : "; ", w);
    absl::StrAppend(
        &out, Row({absl::StrCat(k.workload_index() + 1),  // numbered from 1, as the CLI
                   XmlEscape(t.workload().uuid().substr(0, 8)),
                   Status(t.evaluation().status()), Ms(lat), Ms(ref),
                   // A speedup is only claimed for a workload that passed.
                   lat > 0 && ref > 0 && t.evaluation().status() == v1::PASSED
                       ? absl::StrFormat("%.3fx", ref / lat)
                       : "-",
                   t.evaluation().has_correctness()
                       ? absl::StrFormat("%.3g", t.evaluation().correctness().max_absolute_error())
                       : "-",
                   // The share of the GPU time done by the solution's own kernels.
                   !k.has_own_work()          ? "-"
                   : k.own_work().measured() ? integrity::ShareText(k.own_work().share())
                                             : "not measured",
                   XmlEscape(why)},
                  {true, false, false, true, true, true, true, true}));
  }
  absl::StrAppend(&out, "</table>\n");
  if (run.kind() == "profile" && run.has_profile()) {
    // What `kiln profile` prints: every profiled kernel side by side, each one's direction.
    absl::StrAppend(&out, "<h2>Nsight Compute profile (section ",
                    XmlEscape(run.profile().section()), ")</h2><pre class=\"profile\">",
                    XmlEscape(RenderRunProfile(run.profile())), "</pre>\n");
  }
  if (!run.artifacts().empty()) {
    absl::StrAppend(&out, "<h2>Artifacts</h2><table>", Header({"kind", "name", "bytes", "sha256"}));
    for (const v1::ArtifactRef& a : run.artifacts()) {
      absl::StrAppend(&out, Row({XmlEscape(a.kind()),
                                 absl::StrCat("<a href=\"/runs/", XmlEscape(run.run_id()),
                                              "/artifacts/", XmlEscape(a.kind()), "/",
                                              XmlEscape(a.name()), "\">", XmlEscape(a.name()),
                                              "</a>"),
                                 absl::StrCat(a.size()),
                                 XmlEscape(a.sha256().substr(0, 16))},
                                {false, false, true}));
    }
    absl::StrAppend(&out, "</table>\n");
  }
  for (const v1::SourceFile& f : run.solution().sources()) {
    absl::StrAppend(&out, "<h2>Source: ", XmlEscape(f.path()), "</h2><pre>", XmlEscape(f.content()),
                    "</pre>\n");
  }
  if (!run.compile_log().empty()) {
    absl::StrAppend(&out, "<h2>Compiler output</h2><pre>", XmlEscape(run.compile_log()), "</pre>\n");
  }
  return out;
}

std::string DiffSection(const std::string& previous_run_id, const std::string& diff) {
  if (previous_run_id.empty()) {
    return "<h2>Changes</h2><p class=\"note\">The first run of this principal on this "
           "definition.</p>\n";
  }
  std::string out = absl::StrCat("<h2>Changes since ", RunLink(previous_run_id),
                                 " (this principal's previous run of the definition)</h2>\n");
  if (diff.empty()) return out + "<p class=\"note\">The same sources.</p>\n";
  absl::StrAppend(&out, "<pre class=\"diff\">");
  for (absl::string_view line : absl::StrSplit(diff, '\n')) {
    const char* cls = absl::StartsWith(line, "+++") || absl::StartsWith(line, "---") ? "hunk"
                      : absl::StartsWith(line, "+")                                  ? "add"
                      : absl::StartsWith(line, "-")                                  ? "del"
                      : absl::StartsWith(line, "@@")                                 ? "hunk"
                                                                                     : nullptr;
    absl::StrAppend(&out, cls ? absl::StrCat("<span class=\"", cls, "\">") : "", XmlEscape(std::string_view(line.data(), line.size())),
                    cls ? "</span>" : "", "\n");
  }
  return out + "</pre>\n";
}

std::string ReportBody(const std::string& definition, const std::string& svg,
                       const std::string& text) {
  // The SVG is kiln's own rendering (report/definition_report_svg.cc escapes what it draws).
  return absl::StrCat("<p>Every team's counted run of ", DefinitionLink(definition),
                      " (as kiln report computes it; docs/report.md has the formulas). ",
                      "<a href=\"?rule=best\">best runs</a> &middot; <a href=\"?\">latest "
                      "runs</a></p>\n<div class=\"report\">", svg, "</div>\n<pre>", XmlEscape(text),
                      "</pre>\n");
}

std::string LoginBody(const std::string& message) {
  return absl::StrCat(
      message.empty() ? "" : absl::StrCat("<p class=\"warn\">", XmlEscape(message), "</p>\n"),
      "<form method=\"post\" action=\"/login\"><label>Token <input type=\"password\" "
      "name=\"token\" autocomplete=\"current-password\" required></label> <button "
      "type=\"submit\">Log in</button></form>\n<p class=\"note\">The token is the one the "
      "harness's tokens file names for you (the same as for kiln --token). It is kept in a "
      "cookie of this site only.</p>\n");
}

std::string ErrorBody(const std::string& status, const std::string& message) {
  return absl::StrCat("<p><strong>", XmlEscape(status), "</strong>: ", XmlEscape(message), "</p>\n");
}


}  // namespace kiln::web
