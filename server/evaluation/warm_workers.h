// Trusted programs kept running between runs, so that a verdict does not wait for a process
// start, a CUDA context or `import torch`: the definition's reference (native or Python), served
// by one long-lived sandboxed worker per (program, definition, backend, device slot).
//
// Only operator-registered code is kept warm: a candidate always gets a fresh process that no
// other candidate ever shared, and the reference's worker never sees a candidate's files (nor a
// candidate its folder). A warm worker is replaced when it fails (its session has ended) or when
// what it serves changes (the key changes); a device slot keeps at most `per_slot` of them, the
// least recently used going first.
//
//   WarmWorkers::Lease lease = warm.Take(slot, key);   // empty session: start one
//   ... lease.session->Call(...) ...
//   warm.Give(slot, std::move(lease));                 // kept while open
#ifndef KILN_SERVER_EVALUATION_WARM_WORKERS_H_
#define KILN_SERVER_EVALUATION_WARM_WORKERS_H_

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "harness/worker/worker_client.h"

namespace kiln {

class WarmWorkers {
 public:
  struct Lease {
    std::string key;
    std::unique_ptr<WorkerSession> session;  // null: none was warm; the caller starts one
    std::string dir;                         // its canonical folder (outputs go below it)
    std::string log_path;
    bool device_zero = false;                // it sees only its own GPU, as device 0
    int64_t served = 0;                      // requests it has served before this lease
  };

  explicit WarmWorkers(int per_slot = 2) : per_slot_(per_slot) {}
  WarmWorkers(const WarmWorkers&) = delete;
  WarmWorkers& operator=(const WarmWorkers&) = delete;

  // The warm worker of `key` on `slot`, taken out of the pool (a slot's runs run one at a time,
  // so nothing else wants it meanwhile); Lease.session is null when there is none.
  Lease Take(const std::string& slot, const std::string& key);
  // Puts a worker back. One whose session has ended is dropped (its process is gone). The
  // workers left end with this object (harness shutdown).
  void Give(const std::string& slot, Lease lease);

 private:
  const int per_slot_;
  std::mutex mu_;
  // Per slot, most recently used first.
  std::map<std::string, std::list<Lease>> slots_;
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_WARM_WORKERS_H_
