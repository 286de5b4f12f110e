#include "report/table.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/model/speedup_interval.h"

namespace kiln::cli {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

namespace {

void AppendLine(const std::vector<std::string>& cells, const std::vector<Column>& columns,
                const std::vector<size_t>& widths, std::string* out) {
  std::string line;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) line += "  ";
    size_t pad = widths[i] - std::min(widths[i], cells[i].size());
    if (columns[i].align == Align::kRight) line.append(pad, ' ');
    line += cells[i];
    if (columns[i].align == Align::kLeft) line.append(pad, ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  *out += line;
  *out += '\n';
}

}  // namespace

std::string Table::Render() const {
  std::vector<size_t> widths(columns_.size());
  std::vector<std::string> headers;
  for (size_t i = 0; i < columns_.size(); ++i) {
    widths[i] = columns_[i].header.size();
    headers.push_back(columns_[i].header);
  }
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  AppendLine(headers, columns_, widths, &out);
  std::vector<std::string> rule;
  for (size_t w : widths) rule.emplace_back(w, '-');
  AppendLine(rule, columns_, widths, &out);
  for (const auto& row : rows_) AppendLine(row, columns_, widths, &out);
  return out;
}

std::string FormatMs(double ms) {
  if (!std::isfinite(ms) || ms <= 0) return kAbsent;
  if (ms >= 0.01) return absl::StrFormat("%.3f", ms);
  return absl::StrFormat("%#.3g", ms);
}

std::string FormatSpeedup(double factor) {
  if (!std::isfinite(factor) || factor <= 0) return kAbsent;
  return absl::StrFormat("%.2fx", factor);
}

std::string FormatSpeedupInterval(const Interval& speedup) {
  if (!(speedup.high > 0)) return kAbsent;
  return absl::StrCat(FormatSpeedup(speedup.low), "-", FormatSpeedup(speedup.high));
}

std::string NoiseMark(const Interval& speedup, double floor) {
  return WithinNoise(speedup, floor) ? "tie" : "";
}

std::string FormatNoiseFloor(double floor) { return absl::StrFormat("%g%%", floor * 100); }

absl::StatusOr<double> ParseNoiseFloor(std::string_view text) {
  if (text.empty()) return kDefaultNoiseFloor;
  const std::string value(text);
  double floor = 0;
  if (!absl::SimpleAtod(value, &floor) || !ValidNoiseFloor(floor)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--noise-floor: expected a fraction from 0 to below 1 (0.02 is 2%), got '", value, "'"));
  }
  return floor;
}

std::string FormatError(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return absl::StrFormat("%.2e", value);
}

std::string FormatSeconds(double s) { return absl::StrFormat("%.2f", s); }

std::string FormatUnixMs(int64_t unix_ms) {
  if (unix_ms <= 0) return kAbsent;
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string ShortId(std::string_view id, size_t n) { return std::string(id.substr(0, n)); }

std::string RunLabel(std::string_view run_id) {
  if (run_id.size() == 20) return std::string(run_id.substr(12));
  return ShortId(run_id);
}

std::vector<std::string> UniquePrefixes(const std::vector<std::string>& ids, size_t min) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const std::string& id : ids) {
    size_t need = min;
    for (const std::string& other : ids) {
      if (other == id) continue;
      size_t common = 0;
      while (common < id.size() && common < other.size() && id[common] == other[common]) ++common;
      need = std::max(need, common + 1);
    }
    out.push_back(id.substr(0, std::min(need, id.size())));
  }
  return out;
}

namespace {

std::vector<std::string_view> SplitLines(std::string_view text) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::vector<std::string_view> lines;
  if (text.empty()) return lines;
  size_t start = 0;
  for (;;) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::string TailLines(std::string_view text, size_t max_lines) {
  std::vector<std::string_view> lines = SplitLines(text);
  size_t omitted = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string out;
  if (omitted > 0) out = absl::StrFormat("... (%d lines omitted)\n", omitted);
  for (size_t i = omitted; i < lines.size(); ++i) {
    out += lines[i];
    if (i + 1 < lines.size()) out += '\n';
  }
  return out;
}

std::string Indent(std::string_view text, std::string_view prefix) {
  std::string out;
  for (std::string_view line : SplitLines(text)) {
    out += prefix;
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace kiln::cli
