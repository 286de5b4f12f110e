// DefinitionReportSvg: the fast_p curves and the per-workload speedup bars, written by hand.
//
// Layout (pixels): a title band, the fast_p chart (plot on the left, legend on the right), then
// the bar chart with the workload labels turned under it. Every coordinate goes through Num(),
// which prints two decimals and never NaN or inf.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/definition_report.h"
#include "report/report.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

constexpr double kMinWidth = 960;
constexpr double kLeft = 80;          // left edge of both plots
constexpr double kLegendWidth = 230;  // right of the fast_p plot
constexpr double kCurveTop = 70, kCurveHeight = 300;
constexpr double kBarsTop = 470, kBarsHeight = 260;
constexpr double kLabelBand = 150;  // under the bars, for the turned workload labels
constexpr int kPGridSteps = 400;    // samples of the fast_p curve
constexpr size_t kMaxBarCompetitors = 8;
constexpr size_t kMaxLabelChars = 30;
constexpr double kEmptyHeight = 140;  // the whole SVG of a report with nothing to compare

// Tableau 10: distinguishable, also in grey print.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string Color(size_t i) { return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))]; }

// Curves that coincide must not hide each other: each has its own dash pattern and is drawn a
// few pixels off the others (curve i at (i - (n-1)/2) * kCurveOffset pixels).
constexpr const char* kDashes[] = {"", "8 4", "3 3", "10 3 3 3", "1 3", "12 6"};
constexpr double kCurveOffset = 3;

std::string Dash(size_t i) {
  const char* d = kDashes[i % (sizeof(kDashes) / sizeof(kDashes[0]))];
  return *d == '\0' ? "" : absl::StrCat(" stroke-dasharray=\"", d, "\"");
}

std::string Num(double v) {
  if (!std::isfinite(v)) v = 0;
  return absl::StrFormat("%.2f", v);
}

std::string Text(double x, double y, const std::string& text, const std::string& attrs = "") {
  return absl::StrCat("<text x=\"", Num(x), "\" y=\"", Num(y), "\"", attrs.empty() ? "" : " ",
                      attrs, ">", XmlEscape(text), "</text>\n");
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& attrs) {
  return absl::StrCat("<line x1=\"", Num(x1), "\" y1=\"", Num(y1), "\" x2=\"", Num(x2), "\" y2=\"",
                      Num(y2), "\" ", attrs, "/>\n");
}

std::string Truncate(std::string text, size_t n) {
  if (text.size() <= n) return text;
  return text.substr(0, n - 3) + "...";
}

std::vector<WorkloadOutcome> Outcomes(const Competitor& c, int b) {
  std::vector<WorkloadOutcome> outcomes;
  for (const CompetitorWorkload& w : c.workloads) {
    outcomes.push_back({w.best_latency_ms > 0, w.speedup[b]});
  }
  return outcomes;
}

// The p range: 0 to the largest speedup rounded up to 0.5 (with room), at least 2, at most 10.
double MaxP(const DefinitionReport& report, int b) {
  double largest = 0;
  for (const Competitor& c : report.competitors) {
    for (const CompetitorWorkload& w : c.workloads) largest = std::max(largest, w.speedup[b]);
  }
  return std::clamp(std::ceil(largest * 1.1 * 2) / 2, 2.0, 10.0);
}

std::string Legend(const DefinitionReport& report, int b, double x, double y) {
  std::string out =
      Text(x, y, report.group_by == GroupBy::kTeam ? "teams" : "solutions", "font-weight=\"bold\"");
  const size_t max_rows = static_cast<size_t>(kCurveHeight / 18) - 1;
  for (size_t i = 0; i < report.competitors.size(); ++i) {
    const double row = y + 18 * static_cast<double>(i + 1);
    if (i == max_rows) {
      out += Text(x, row, absl::StrCat("+", report.competitors.size() - i, " more"));
      break;
    }
    const Competitor& c = report.competitors[i];
    out += absl::StrCat("<rect x=\"", Num(x), "\" y=\"", Num(row - 10), "\" width=\"14\" height=\"",
                        "10\" fill=\"", Color(i), "\"/>\n");
    out += Line(x + 16, row - 5, x + 34, row - 5,
                absl::StrCat("stroke=\"", Color(i), "\" stroke-width=\"2\"", Dash(i)));
    std::string label = Truncate(c.name, 22);
    if (c.fast_p[b][0].has_value()) {
      absl::StrAppend(&label, " (score ", absl::StrFormat("%.2f", c.score[0].value_or(0)), ")");
    } else {
      absl::StrAppend(&label, " (n/a)");
    }
    out += Text(x + 40, row, label);
  }
  return out;
}

std::string FastPChart(const DefinitionReport& report, int b, double width) {
  const double plot_w = width - kLeft - kLegendWidth - 20;
  const double bottom = kCurveTop + kCurveHeight;
  const double max_p = MaxP(report, b);
  auto x_of = [&](double p) { return kLeft + plot_w * p / max_p; };
  auto y_of = [&](double f) { return bottom - kCurveHeight * f; };
  std::string out = "<g class=\"fast-p\">\n";
  // Grid, axes, ticks.
  for (double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    out += Line(kLeft, y_of(f), kLeft + plot_w, y_of(f), "stroke=\"#e0e0e0\"");
    out += Text(kLeft - 8, y_of(f) + 4, absl::StrFormat("%.2f", f), "text-anchor=\"end\"");
  }
  const double step = max_p <= 4 ? 0.5 : 1.0;
  for (double p = 0; p <= max_p + 1e-9; p += step) {
    out += Line(x_of(p), bottom, x_of(p), bottom + 5, "stroke=\"#333\"");
    out += Text(x_of(p), bottom + 18, absl::StrFormat("%g", p), "text-anchor=\"middle\"");
  }
  out += Line(x_of(1), kCurveTop, x_of(1), bottom, "stroke=\"#999\" stroke-dasharray=\"4 3\"");
  out += Line(kLeft, bottom, kLeft + plot_w, bottom, "stroke=\"#333\"");
  out += Line(kLeft, kCurveTop, kLeft, bottom, "stroke=\"#333\"");
  out += Text(kLeft + plot_w / 2, bottom + 38,
              absl::StrCat("p (speedup threshold vs ", report.baselines[b], ")"),
              "text-anchor=\"middle\"");
  out += Text(24, kCurveTop + kCurveHeight / 2,
              absl::StrCat("fast_p (share of ", report.item, "s correct and faster than p)"),
              absl::StrCat("text-anchor=\"middle\" transform=\"rotate(-90 24 ",
                           Num(kCurveTop + kCurveHeight / 2), ")\""));
  // One step curve per competitor whose fast_p is known, each a few pixels off the others.
  const double curves = static_cast<double>(report.competitors.size());
  for (size_t i = 0; i < report.competitors.size(); ++i) {
    const std::vector<WorkloadOutcome> outcomes = Outcomes(report.competitors[i], b);
    if (!report.competitors[i].fast_p[b][0].has_value()) continue;
    const double shift = (static_cast<double>(i) - (curves - 1) / 2) *
                         std::min(kCurveOffset, 12.0 / std::max(curves - 1, 1.0));
    auto curve_y = [&](double f) { return y_of(f) + shift; };
    // Sampled on the grid; only the corners of the steps are written.
    std::string points;
    double previous = 0;
    for (int k = 0; k <= kPGridSteps; ++k) {
      const double p = max_p * k / kPGridSteps;
      const double f = FastP(outcomes, p).value_or(0);
      if (k == 0) {
        absl::StrAppend(&points, Num(x_of(p)), ",", Num(curve_y(f)));
      } else if (f != previous) {
        absl::StrAppend(&points, " ", Num(x_of(p)), ",", Num(curve_y(previous)), " ",
                        Num(x_of(p)), ",", Num(curve_y(f)));
      }
      if (k == kPGridSteps) absl::StrAppend(&points, " ", Num(x_of(p)), ",", Num(curve_y(f)));
      previous = f;
    }
    absl::StrAppend(&out, "<polyline fill=\"none\" stroke=\"", Color(i),
                    "\" stroke-width=\"2\"", Dash(i), " points=\"", points, "\"><title>",
                    XmlEscape(report.competitors[i].name), "</title></polyline>\n");
  }
  for (const Competitor& c : report.competitors) {
    if (c.fast_p[b][0].has_value()) break;
    if (&c == &report.competitors.back()) {  // no curve at all: say why in the plot
      out += Text(kLeft + plot_w / 2, kCurveTop + kCurveHeight / 2,
                  absl::StrCat("fast_p unavailable: ", report.competitors.front().unavailable[b]),
                  "text-anchor=\"middle\" fill=\"#a00\"");
    }
  }
  out += Legend(report, b, kLeft + plot_w + 30, kCurveTop + 10);
  return out + "</g>\n";
}

// Gridline values of a log scale from `lo` to `hi`: the 1-1.25-1.5-2-3-5-7.5 series (thinned to
// 1-2-5, then to powers of ten, while there would be more than 9), 1x always among them.
std::vector<double> ScaleTicks(double lo, double hi) {
  const std::vector<std::vector<double>> series = {
      {1, 1.25, 1.5, 2, 3, 5, 7.5}, {1, 2, 5}, {1}};
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  std::vector<double> ticks;
  for (const std::vector<double>& mantissas : series) {
    ticks.clear();
    for (int e = first; e <= last; ++e) {
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo * 0.999 && v <= hi * 1.001) ticks.push_back(v);
      }
    }
    // The series of 10 % steps near 1x where the scale is narrow.
    if (ticks.size() < 4) {
      for (double v : {0.8, 0.9, 1.1, 1.2}) {
        // Not beside a tick already there (1.2 next to 1.25 would print over it).
        const bool crowded = std::any_of(ticks.begin(), ticks.end(), [v](double t) {
          return std::abs(std::log10(v / t)) < 0.03;
        });
        if (v >= lo && v <= hi && !crowded) ticks.push_back(v);
      }
      std::sort(ticks.begin(), ticks.end());
      ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
    }
    if (ticks.size() <= 9) break;
  }
  return ticks;
}

std::string BarChart(const DefinitionReport& report, int b, double width) {
  const size_t shown = std::min(report.competitors.size(), kMaxBarCompetitors);
  const double plot_w = width - kLeft - 40;
  const double bottom = kBarsTop + kBarsHeight;
  double lo = 1, hi = 1;
  for (size_t i = 0; i < shown; ++i) {
    for (const CompetitorWorkload& w : report.competitors[i].workloads) {
      if (w.speedup[b] <= 0) continue;
      lo = std::min(lo, w.speedup[b]);
      hi = std::max(hi, w.speedup[b]);
    }
  }
  // The scale fits the data (with 10 % room), and spans at least 0.8x-1.25x: a 0.88x bar is a
  // quarter of the plot's height, not a sliver of a fixed 0.1x-10x decade scale.
  const double scale_lo = std::min(lo / 1.1, 0.8);
  const double scale_hi = std::max(hi * 1.1, 1.25);
  const double log_lo = std::log10(scale_lo), log_hi = std::log10(scale_hi);
  auto y_of = [&](double v) {
    return bottom - kBarsHeight * (std::log10(v) - log_lo) / (log_hi - log_lo);
  };
  std::string out = "<g class=\"speedups\">\n";
  out += Text(
      kLeft, kBarsTop - 22,
      absl::StrCat("speedup vs ", report.baselines[b], " per ", report.item, " (log scale",
                   shown < report.competitors.size()
                       ? absl::StrCat("; ", shown, " highest scores of ", report.competitors.size())
                       : "",
                   ")"),
      "font-weight=\"bold\"");
  for (double v : ScaleTicks(scale_lo, scale_hi)) {
    out += Line(kLeft, y_of(v), kLeft + plot_w, y_of(v), "stroke=\"#e0e0e0\"");
    out += Text(kLeft - 8, y_of(v) + 4, absl::StrFormat("%gx", v), "text-anchor=\"end\"");
  }
  out += Text(kLeft + plot_w, kBarsTop - 8,
              absl::StrCat("x: no PASSED run of that ",
                           report.group_by == GroupBy::kTeam ? "team" : "solution",
                           " on the ", report.item, ", or no baseline latency"),
              "text-anchor=\"end\" font-size=\"10\" fill=\"#555\"");
  out += Line(kLeft, kBarsTop, kLeft, bottom, "stroke=\"#333\"");
  const size_t n = report.workloads.size();
  std::vector<std::string> uuids;
  for (const ReportWorkload& w : report.workloads) uuids.push_back(w.workload.uuid());
  // Workloads by the shortest unique prefix of their uuids; a suite's problems by name.
  const std::vector<std::string> ids = report.item == "workload" ? UniquePrefixes(uuids) : uuids;
  const double group_w = plot_w / static_cast<double>(std::max<size_t>(n, 1));
  const double bar_w =
      std::max(1.0, (group_w * 0.8) / static_cast<double>(std::max<size_t>(shown, 1)));
  for (size_t wi = 0; wi < n; ++wi) {
    const double x0 = kLeft + group_w * static_cast<double>(wi) + group_w * 0.1;
    for (size_t i = 0; i < shown; ++i) {
      const Competitor& c = report.competitors[i];
      const double v = c.workloads[wi].speedup[b];
      const double x = x0 + bar_w * static_cast<double>(i);
      const std::string tip =
          absl::StrCat(c.name, ": ", v > 0 ? FormatSpeedup(v) : "no PASSED run or no baseline");
      if (v <= 0) {
        out += Text(x + bar_w / 2, y_of(1) - 3, "x",
                    absl::StrCat("text-anchor=\"middle\" font-size=\"9\" fill=\"", Color(i), "\""));
        continue;
      }
      const double top = std::min(y_of(v), y_of(1)), h = std::abs(y_of(v) - y_of(1));
      absl::StrAppend(&out, "<rect x=\"", Num(x), "\" y=\"", Num(top), "\" width=\"",
                      Num(std::max(bar_w - 1, 1.0)), "\" height=\"", Num(std::max(h, 1.0)),
                      "\" fill=\"", Color(i), "\"><title>", XmlEscape(tip), "</title></rect>\n");
      if (bar_w >= 26) {  // the value itself, where it fits
        const bool up = v >= 1;
        out += Text(x + bar_w / 2, up ? top - 3 : top + h + 11, FormatSpeedup(v),
                    "text-anchor=\"middle\" font-size=\"9\"");
      }
    }
    const double cx = x0 + group_w * 0.4;
    const std::string label = Truncate(absl::StrCat(ids[wi],
                                                    " ", AxesText(report.workloads[wi].workload)),
                                       kMaxLabelChars);
    out += Text(cx, bottom + 14, label,
                absl::StrCat("text-anchor=\"end\" font-size=\"10\" transform=\"rotate(-40 ",
                             Num(cx), " ", Num(bottom + 14), ")\""));
  }
  out += Line(kLeft, y_of(1), kLeft + plot_w, y_of(1), "stroke=\"#222\" stroke-width=\"1.5\"");
  out += Text(kLeft + plot_w, y_of(1) - 4, "1x", "text-anchor=\"end\" font-size=\"10\"");
  return out + "</g>\n";
}

}  // namespace

SvgPanel DefinitionReportSvgPanel(const DefinitionReport& report, const std::string& baseline) {
  const int b = BaselineIndex(report, baseline);
  const size_t bars = std::min(report.competitors.size(), kMaxBarCompetitors);
  SvgPanel panel;
  panel.width =
      std::max(kMinWidth, kLeft + 40 +
                              static_cast<double>(report.workloads.size()) *
                                  std::max(28.0, 10.0 * static_cast<double>(bars) + 10));
  const double width = panel.width;
  const bool empty = !report.empty_reason.empty() || report.competitors.empty() || b < 0;
  // An empty report is a short card with the reason, not a page of blank plots.
  panel.height = empty ? kEmptyHeight : kBarsTop + kBarsHeight + kLabelBand;
  std::string& out = panel.body;
  out = absl::StrCat("<rect x=\"0\" y=\"0\" width=\"", Num(width), "\" height=\"",
                     Num(panel.height), "\" fill=\"white\"/>\n");
  out += Text(kLeft, 28,
              absl::StrCat(report.definition, ": fast_p vs ", baseline, " (mode ", report.mode,
                           ", backend ", report.backend.empty() ? "any" : report.backend, ")"),
              "font-size=\"16\" font-weight=\"bold\"");
  if (empty) {
    absl::StrAppend(&out, "<rect x=\"", Num(kLeft - 16), "\" y=\"46\" width=\"",
                    Num(width - 2 * (kLeft - 16)), "\" height=\"", Num(kEmptyHeight - 70),
                    "\" fill=\"#f4f4f4\" stroke=\"#999\"/>\n");
    out += Text(kLeft, 78,
                !report.empty_reason.empty() ? report.empty_reason
                : b < 0 ? absl::StrCat("baseline ", baseline, " is not in this report")
                        : "nothing to compare",
                "font-size=\"15\" fill=\"#333\"");
    out += Text(kLeft, 104,
                "Nothing to plot: a team appears once a run of it on the registered workloads "
                "finishes (kiln submit).",
                "fill=\"#555\"");
    return panel;
  }
  out += Text(kLeft, 48,
              absl::StrCat(report.ranked_runs, " ranked run", report.ranked_runs == 1 ? "" : "s",
                           ", ", report.workloads.size(), " ", report.item,
                           report.workloads.size() == 1 ? "" : "s", "; a ", report.item,
                           " without a PASSED run counts as not fast"),
              "fill=\"#555\"");
  out += FastPChart(report, b, width);
  out += BarChart(report, b, width);
  return panel;
}

std::string SvgDocument(double width, double height, const std::string& body) {
  return absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", Num(width),
                      "\" height=\"", Num(height), "\" viewBox=\"0 0 ", Num(width), " ",
                      Num(height), "\" font-family=\"sans-serif\" font-size=\"12\">\n", body,
                      "</svg>\n");
}

std::string DefinitionReportSvg(const DefinitionReport& report, const std::string& baseline) {
  const SvgPanel panel = DefinitionReportSvgPanel(report, baseline);
  return SvgDocument(panel.width, panel.height, panel.body);
}

}  // namespace kiln::cli
