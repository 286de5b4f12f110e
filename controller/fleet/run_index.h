// Which harness holds a run: the fleet front door's index (table fleet_runs of controller.db),
// written when a harness admits a run sent through the controller and read by the calls that
// concern one run. A second connection to the campaign archive's database, opened after
// CampaignArchive::Open has applied the migrations.
#ifndef KILN_CONTROLLER_FLEET_RUN_INDEX_H_
#define KILN_CONTROLLER_FLEET_RUN_INDEX_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace kiln::archive {
class Connection;
}

namespace kiln::controller {

class RunIndex {
 public:
  static absl::StatusOr<std::unique_ptr<RunIndex>> Open(const std::string& data_dir);
  ~RunIndex();

  // Records (or moves) `run_id` to `harness`.
  [[nodiscard]] absl::Status Record(const std::string& run_id, const std::string& harness);
  // The harness that holds `run_id`, if the index has it.
  absl::StatusOr<std::optional<std::string>> HarnessOf(const std::string& run_id);

 private:
  explicit RunIndex(std::unique_ptr<archive::Connection> conn);
  std::mutex mu_;
  std::unique_ptr<archive::Connection> conn_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_FLEET_RUN_INDEX_H_
