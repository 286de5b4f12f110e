// Text and JSON views of harness answers that several commands print: `kiln runs show`,
// `kiln defs list`, `kiln leaderboard`, and the tools of `kiln mcp`.
#ifndef KILN_CLIENT_VIEWS_H_
#define KILN_CLIENT_VIEWS_H_

#include <string>

#include "kiln/v1/harness.pb.h"
#include "report/json_output.h"

namespace kiln::cli {

// `kiln runs show`: fields, traces, summary, failure details, compiler log, sources.
std::string RunShowText(const v1::Run& run);
// `kiln runs show --json`.
Json RunShowJson(const v1::Run& run);
// `kiln defs list`: one row per definition, then integrity and evaluability warnings.
std::string DefinitionsText(const v1::ListDefinitionsResponse& response);
// `kiln leaderboard`: the rule, one row per principal, the noise note.
// `noise_floor`: a score within it of 1x is marked a tie (harness/model/speedup_interval.h).
std::string LeaderboardText(const v1::Leaderboard& board, double noise_floor);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_VIEWS_H_
