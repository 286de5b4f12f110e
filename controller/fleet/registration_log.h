// The fleet front door's journal on disk (table fleet_registrations of controller.db): what
// callers registered through the controller, so that a controller that restarts still replays it
// to a harness that joins or comes back (HarnessPool::LoadJournal). A second connection to the
// campaign archive's database, opened after CampaignArchive::Open has applied the migrations.
#ifndef KILN_CONTROLLER_FLEET_REGISTRATION_LOG_H_
#define KILN_CONTROLLER_FLEET_REGISTRATION_LOG_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/harness_pool.h"

namespace kiln::archive {
class Connection;
}

namespace kiln::controller {

class RegistrationLog {
 public:
  static absl::StatusOr<std::unique_ptr<RegistrationLog>> Open(const std::string& data_dir);
  ~RegistrationLog();

  // Stores `entry`, replacing the one of its kind and key, as the newest.
  [[nodiscard]] absl::Status Put(const Registration& entry);
  // Every entry, oldest first.
  absl::StatusOr<std::vector<Registration>> All();

 private:
  explicit RegistrationLog(std::unique_ptr<archive::Connection> conn);
  std::mutex mu_;
  std::unique_ptr<archive::Connection> conn_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_FLEET_REGISTRATION_LOG_H_
