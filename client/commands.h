// The kiln subcommands. Each returns the process exit code (see cli.h) and writes results to
// console.out, progress and errors to console.err.
#ifndef KILN_CLIENT_COMMANDS_H_
#define KILN_CLIENT_COMMANDS_H_

#include "client/cli.h"

namespace kiln::cli {

int RunSubmit(const Invocation& inv, Console& console);    // submit.cc
int RunRunsList(const Invocation& inv, Console& console);  // runs.cc
int RunRunsShow(const Invocation& inv, Console& console);  // runs.cc
int RunDefsAdd(const Invocation& inv, Console& console);   // defs.cc
int RunDefsList(const Invocation& inv, Console& console);  // defs.cc
int RunNode(const Invocation& inv, Console& console);      // node.cc
int RunDemo(const Invocation& inv, Console& console);      // demo.cc

}  // namespace kiln::cli

#endif  // KILN_CLIENT_COMMANDS_H_
