// kiln-harness's command line before absl parses it. kiln spells flags with dashes
// (--data-dir); absl flag names use underscores. And absl exits 1 on a bad flag, where
// kiln-harness promises 2, so flags are checked here first.
#ifndef KILN_SERVER_COMMAND_LINE_H_
#define KILN_SERVER_COMMAND_LINE_H_

#include <string>
#include <vector>

namespace kiln {

// argv with the dashes inside flag names turned into underscores ("--data-dir=x" ->
// "--data_dir=x"); values and positional arguments are left alone.
std::vector<std::string> NormalizeFlagNames(int argc, char** argv);

// Empty when every flag in `args` (normalised) is known and its value parses; else the error,
// naming the flag as the user wrote it ("unknown flag --max-queues").
std::string CheckFlags(const std::vector<std::string>& args);

}  // namespace kiln

#endif  // KILN_SERVER_COMMAND_LINE_H_
