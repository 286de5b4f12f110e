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
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

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

  // `discard` (optional): called with the folder and the log of each worker dropped by Give
  // (ended, or evicted) once its process is gone: the files it kept for its next run
  // (workload_evaluation.cc) go with it.
  using DiscardFn = std::function<void(const std::string& dir, const std::string& log_path)>;
  explicit WarmWorkers(int per_slot = 2, DiscardFn discard = {})
      : per_slot_(per_slot), discard_(std::move(discard)) {}
  WarmWorkers(const WarmWorkers&) = delete;
  WarmWorkers& operator=(const WarmWorkers&) = delete;

  // The warm worker of `key` on `slot`, taken out of the pool (a slot's runs run one at a time,
  // so nothing else wants it meanwhile); Lease.session is null when there is none.
  Lease Take(const std::string& slot, const std::string& key);
  // Puts a worker back. One whose session has ended is dropped (its process is gone), and so is
  // the least recently used past `per_slot` (its process ended here); either's folder is
  // discarded, and its log. The workers left end with this object (harness shutdown).
  void Give(const std::string& slot, Lease lease);

 private:
  const int per_slot_;
  const DiscardFn discard_;
  std::mutex mu_;
  // Per slot, most recently used first.
  std::map<std::string, std::list<Lease>> slots_;
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_WARM_WORKERS_H_
