// The web console's pages (kiln-harness --http-listen): server-rendered HTML with inline SVG
// charts, one function a page, from the same messages the RPCs return. No request handling here
// (web_console.cc), so the pages are tested as plain functions.
#ifndef KILN_WEB_WEB_PAGES_H_
#define KILN_WEB_WEB_PAGES_H_

#include <map>
#include <string>
#include <vector>
#include <string_view>

#include "kiln/v1/controller.pb.h"
#include "kiln/v1/harness.pb.h"

namespace kiln::web {

// A whole page: `title`, the navigation (with `nav` marked current: node | definitions | runs),
// `body` (HTML), and who is looking (`viewer`: "ops (operator)"; empty: no login form link).
// Percent-encoding for a query parameter's value (RFC 3986 unreserved characters kept).
std::string UrlEncode(std::string_view text);

enum class Site { kHarness, kController };
std::string Page(const std::string& title, const std::string& nav, const std::string& body,
                 const std::string& viewer, Site site = Site::kHarness);

std::string NodeBody(const v1::NodeInfo& node);
std::string DefinitionsBody(const v1::ListDefinitionsResponse& list);
// A definition and its leaderboard (`board` may be empty when the caller may not read it).
std::string DefinitionBody(const v1::DefinitionDetail& detail, const v1::Leaderboard& board);
// One page of runs; `query` is the page's query string without page_token (for the next link).
std::string RunsBody(const v1::ListRunsResponse& runs, const std::string& query);
// A run's raw timing samples by artifact name ("w0", "w0_reference", ...; harness archive kind
// "samples", harness/model/samples_artifact.h), in ms.
using RunSamples = std::map<std::string, std::vector<double>>;

std::string RunBody(const v1::Run& run, const RunSamples& samples = {});
// The run's sources against the same principal's previous run of the definition (`diff`: a
// unified diff, "" when the sources are the same); `previous_run_id` empty: there is none.
std::string DiffSection(const std::string& previous_run_id, const std::string& diff);
// kiln-controller's pages: every campaign; one campaign (its best latency per round, budget
// burn-down, promotions, rounds, candidates' verdicts, harnesses), from GetCampaign.
std::string CampaignsBody(const v1::ListCampaignsResponse& list);
std::string CampaignBody(const v1::Campaign& campaign);
// The incumbent's latency after each round (baseline at round 0, then each promotion) as a step
// line on a log axis. Empty when the campaign has no latency yet.
std::string BestLatencyChart(const v1::Campaign& campaign);
// Each budget limit the campaign has, with how much of it is used, as bars.
std::string BudgetChart(const v1::Campaign& campaign);
// A definition report: its SVG (fast_p curves, per-workload speedups) and its text.
std::string ReportBody(const std::string& definition, const std::string& svg,
                       const std::string& text);
// The login form; `message` says why it is shown ("" when asked for).
std::string LoginBody(const std::string& message);
// An error page's body: the status name and message.
std::string ErrorBody(const std::string& status, const std::string& message);

// The latency chart of a run: one row per workload, a box (quartiles), whiskers (min..max) and a
// median line for the candidate and, beside it, for the reference; drawn on one log axis. Where
// the raw samples are at hand (`samples`) the box comes from them and every sample is drawn as
// a dot; otherwise from the trace's summary statistics. Empty when no workload was timed.
std::string LatencyChart(const v1::Run& run, const RunSamples& samples = {});
// The leaderboard chart: one bar per entry, its score (speedup over the reference) with the 95 %
// interval as a line; the 1x line marked. Empty when no entry has a score.
std::string ScoreChart(const v1::Leaderboard& board);

}  // namespace kiln::web

#endif  // KILN_WEB_WEB_PAGES_H_
