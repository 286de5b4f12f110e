// Fixed-column text tables and the number formats the kiln CLI prints.
//
//   Table t({{"#", Align::kRight}, {"status", Align::kLeft}});
//   t.AddRow({"1", "PASSED"});
//   std::cout << t.Render();
#ifndef KILN_REPORT_TABLE_H_
#define KILN_REPORT_TABLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {
struct Interval;  // harness/model/speedup_interval.h
}  // namespace kiln

namespace kiln::cli {

enum class Align { kLeft, kRight };

struct Column {
  std::string header;
  Align align = Align::kLeft;
};

// Columns are as wide as their widest cell (header included), separated by two spaces, with a
// dashed rule under the header. Trailing spaces are trimmed from every line.
class Table {
 public:
  explicit Table(std::vector<Column> columns);

  // A row with fewer cells than columns is padded with empty cells; extra cells are dropped.
  void AddRow(std::vector<std::string> cells);
  size_t row_count() const { return rows_.size(); }

  // Every line ends in '\n'.
  std::string Render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// "-" stands for a value that is absent (not measured, not compared).
inline constexpr char kAbsent[] = "-";

// Milliseconds: three decimals from 0.01 ms up, three significant digits below ("0.00213",
// "2.13e-05"); kAbsent when not positive or not finite.
std::string FormatMs(double ms);
// "2.68x"; kAbsent when not positive or not finite.
std::string FormatSpeedup(double factor);
// "1.02x-1.31x", the 95 % interval of a speedup; kAbsent when it is not known.
std::string FormatSpeedupInterval(const Interval& speedup);
// "tie" when a known speedup is a tie with 1x at noise floor `floor` (WithinNoise: its 95 %
// interval widened by the floor holds 1x), else "".
std::string NoiseMark(const Interval& speedup, double floor);
// "2%", "0.5%": a noise floor as the legends name it.
std::string FormatNoiseFloor(double floor);
// The --noise-floor of kiln report and kiln leaderboard: `text` absent (empty) gives
// kDefaultNoiseFloor; else a fraction in [0, 1). Fails with a message naming --noise-floor.
absl::StatusOr<double> ParseNoiseFloor(std::string_view text);
// Errors in scientific notation ("1.00e+00"); "nan", "inf" spelled out.
std::string FormatError(double value);
// Seconds with two decimals ("1.23").
std::string FormatSeconds(double s);
// Local time "YYYY-MM-DD HH:MM:SS"; kAbsent for 0.
std::string FormatUnixMs(int64_t unix_ms);
// The first `n` characters of an identifier.
std::string ShortId(std::string_view id, size_t n = 8);
// How a run id is shown where space is short: its random part (the last 8 of its 20 hex
// characters; the first 12 are its creation time, the same for every run of a minute), which
// `kiln runs show` takes back. Other ids: their first 8 characters.
std::string RunLabel(std::string_view run_id);
// The shortest prefixes, at least `min` characters, that tell `ids` apart (workload UUIDs in one
// table: two sharing their first 8 characters show as many more as it takes). Index-aligned;
// equal ids get equal prefixes.
std::vector<std::string> UniquePrefixes(const std::vector<std::string>& ids, size_t min = 8);
// The last `max_lines` lines of `text`, preceded by "... (N lines omitted)" when cut.
std::string TailLines(std::string_view text, size_t max_lines);
// `text` indented by `prefix` on every line, ending in '\n' unless empty.
std::string Indent(std::string_view text, std::string_view prefix);

}  // namespace kiln::cli

#endif  // KILN_REPORT_TABLE_H_
