#include "harness/model/run_team.h"

namespace kiln {

std::string TeamOf(const v1::Run& run) {
  return run.principal().empty() ? "local" : run.principal();
}

std::string AuthorOf(const v1::Run& run) {
  return run.solution().author().empty() ? run.author() : run.solution().author();
}

}  // namespace kiln
