// The pieces every console page is made of: times, latencies, verdicts, links, table rows.
// Shared by the harness's pages (web_pages.cc) and the controller's (campaign_pages.cc).
#ifndef KILN_WEB_PAGE_PARTS_H_
#define KILN_WEB_PAGE_PARTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/v1/types.pb.h"

namespace kiln::web {

// "2026-12-05 07:50:00 UTC"; "-" for 0.
std::string Time(int64_t unix_ms);
// "0.1234 ms"; "-" when not positive.
std::string Ms(double ms);
// The verdict, coloured by its class.
std::string Status(v1::EvaluationStatus s);
std::string RunLink(const std::string& id);
std::string DefinitionLink(const std::string& name);
// A solution's or a definition's name in a table cell: a long one wraps anywhere rather than
// widening the table past the window (agents' solution names run to 90 characters).
std::string NameCell(const std::string& name);
// A table row; cells flagged in `numeric` are right-aligned.
std::string Row(const std::vector<std::string>& cells, const std::vector<bool>& numeric = {});
std::string Header(const std::vector<std::string>& names);

}  // namespace kiln::web

#endif  // KILN_WEB_PAGE_PARTS_H_
