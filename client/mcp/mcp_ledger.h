// kiln mcp's evaluation budget and its ledger (docs/mcp.md, "Budget").
//
// The ledger file holds a line per evaluation: the run id once its run was admitted, or
// "pending TICKET" while a call holds a slot before admission. Every change is made under an
// exclusive flock(2) of the file, so the budget counts what every kiln mcp process sharing the
// ledger has taken (a server restarted by its client, or several servers of one agent), not
// only this process's calls. A slot is given back only when its run was never admitted; a
// process killed while holding one leaves its "pending" line, which keeps counting (the run may
// have been admitted): the budget errs on the side of never being exceeded.
#ifndef KILN_CLIENT_MCP_MCP_LEDGER_H_
#define KILN_CLIENT_MCP_MCP_LEDGER_H_

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kiln::cli {

class EvaluationLedger {
 public:
  // `path` empty: the ledger lives in this process only. `max_evaluations` < 0: no limit.
  EvaluationLedger(std::string path, int max_evaluations);

  // Takes a slot for one evaluation: its ticket, or nullopt when the ledger already holds
  // max_evaluations lines. An error when the ledger file cannot be read or written.
  absl::StatusOr<std::optional<std::string>> Reserve();
  // The ticket's run was admitted: its line becomes `run_id`.
  absl::Status Admit(const std::string& ticket, const std::string& run_id);
  // The ticket's run was never admitted: its line is removed, the slot given back.
  absl::Status Release(const std::string& ticket);

 private:
  // Runs `change` over the ledger's lines under the process's mutex and the file's lock, and
  // writes them back when it returns true.
  template <typename Change>
  absl::Status Update(Change change);

  std::string path_;
  int max_evaluations_;
  std::mutex mu_;
  std::vector<std::string> lines_;  // the ledger when path_ is empty
};

}  // namespace kiln::cli

#endif  // KILN_CLIENT_MCP_MCP_LEDGER_H_
