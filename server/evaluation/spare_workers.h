// Python workers started ahead of need: per GPU slot, one fresh Python runner that has imported
// torch and triton (on the CPU only: it touches no GPU until its first request, so it never
// disturbs a run being timed on the GPU) and waits for its solution. Not on the host backend,
// where the CPU is what is timed. A spare serves exactly one run: taken, it is that run's
// candidate process, and the next is started at once. It was started without access to any
// solution; the taker copies the solution into its folder.
//
// Beside it, under the slot's key with "|reference" appended, one Python reference runner
// that has imported torch: taken by the next Python reference that no warm worker serves, it
// becomes that reference's warm worker (server/evaluation/warm_workers.h). It runs only
// operator-registered code, like every reference worker.
#ifndef KILN_SERVER_EVALUATION_SPARE_WORKERS_H_
#define KILN_SERVER_EVALUATION_SPARE_WORKERS_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "harness/worker/worker_client.h"
#include "server/evaluation/role_run.h"

namespace kiln {

class SpareWorkers {
 public:
  struct Spare {
    RoleWorker worker;
    std::unique_ptr<WorkerSession> session;
  };

  SpareWorkers() = default;
  // Ends every spare and removes its folder (harness shutdown).
  ~SpareWorkers();
  SpareWorkers(const SpareWorkers&) = delete;
  SpareWorkers& operator=(const SpareWorkers&) = delete;

  // The spare waiting on `slot`, or null (none, or its process has ended).
  std::unique_ptr<Spare> Take(const std::string& slot);
  // Whether a spare waits on `slot` (whose process may have ended since).
  bool Has(const std::string& slot);
  // Keeps `spare` for the next Python candidate on `slot`; one there already stays (the new one
  // is ended).
  void Put(const std::string& slot, std::unique_ptr<Spare> spare);

 private:
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Spare>> spares_;
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_SPARE_WORKERS_H_
