// The kiln subcommands. Each returns the process exit code (see cli.h) and writes results to
// console.out, progress and errors to console.err.
#ifndef KILN_CLIENT_COMMANDS_H_
#define KILN_CLIENT_COMMANDS_H_

#include "client/cli.h"

namespace kiln::cli {

int RunSubmit(const Invocation& inv, Console& console);    // submit.cc
int RunProfile(const Invocation& inv, Console& console);   // profile.cc
int RunRunsList(const Invocation& inv, Console& console);  // runs.cc
int RunRunsShow(const Invocation& inv, Console& console);  // runs.cc
int RunRunsArtifacts(const Invocation& inv, Console& console);  // runs.cc
int RunRunsArtifact(const Invocation& inv, Console& console);   // runs.cc
int RunRunsExport(const Invocation& inv, Console& console);  // export.cc
int RunDefsAdd(const Invocation& inv, Console& console);   // defs.cc
int RunDefsList(const Invocation& inv, Console& console);  // defs.cc
int RunDefsImport(const Invocation& inv, Console& console);  // defs_import.cc
int RunDefsShow(const Invocation& inv, Console& console);    // defs_settings.cc
int RunDefsSet(const Invocation& inv, Console& console);     // defs_settings.cc
int RunSolutionsAdd(const Invocation& inv, Console& console);   // solutions.cc
int RunSolutionsList(const Invocation& inv, Console& console);  // solutions.cc
int RunNode(const Invocation& inv, Console& console);      // node.cc
int RunDemo(const Invocation& inv, Console& console);      // demo.cc
int RunLeaderboard(const Invocation& inv, Console& console);  // leaderboard.cc
int RunMcp(const Invocation& inv, Console& console);          // mcp_tools.cc
int RunRunsDesignate(const Invocation& inv, Console& console);    // leaderboard.cc
int RunRunsUndesignate(const Invocation& inv, Console& console);  // leaderboard.cc
int RunDefinitionReport(const Invocation& inv, Console& console);  // definition_report_command.cc
// campaign.cc: kiln campaign start | list | show | watch | cancel | export (kiln-controller).
int RunCampaignStart(const Invocation& inv, Console& console);
int RunCampaignList(const Invocation& inv, Console& console);
int RunCampaignShow(const Invocation& inv, Console& console);
int RunCampaignWatch(const Invocation& inv, Console& console);
int RunCampaignCancel(const Invocation& inv, Console& console);
int RunCampaignExport(const Invocation& inv, Console& console);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_COMMANDS_H_
