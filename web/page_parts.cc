#include "web/page_parts.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "harness/common/xml_escape.h"

namespace kiln::web {

std::string Time(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

std::string Ms(double ms) { return ms > 0 ? absl::StrFormat("%.4f ms", ms) : std::string("-"); }

std::string Status(v1::EvaluationStatus s) {
  const std::string name = v1::EvaluationStatus_Name(s);
  return absl::StrCat("<span class=\"", name, "\">", name, "</span>");
}

std::string RunLink(const std::string& id) {
  return absl::StrCat("<a href=\"/runs/", XmlEscape(id), "\">", XmlEscape(id), "</a>");
}

std::string DefinitionLink(const std::string& name) {
  return absl::StrCat("<a class=\"name\" href=\"/definitions/", XmlEscape(name), "\">",
                      XmlEscape(name), "</a>");
}

std::string NameCell(const std::string& name) {
  return absl::StrCat("<span class=\"name\">", XmlEscape(name), "</span>");
}

std::string Row(const std::vector<std::string>& cells, const std::vector<bool>& numeric) {
  std::string out = "<tr>";
  for (size_t i = 0; i < cells.size(); ++i) {
    const bool num = i < numeric.size() && numeric[i];
    absl::StrAppend(&out, num ? "<td class=\"num\">" : "<td>", cells[i], "</td>");
  }
  return out + "</tr>\n";
}

std::string Header(const std::vector<std::string>& names) {
  std::string out = "<tr>";
  for (const std::string& n : names) absl::StrAppend(&out, "<th>", n, "</th>");
  return out + "</tr>\n";
}

}  // namespace kiln::web
