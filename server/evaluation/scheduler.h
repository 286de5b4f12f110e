// The node's work queues. Admitted runs wait for the compile pool (so the next candidate
// compiles while the current one is timed), then for a device slot of their backend: one slot
// per device, each running strictly one run at a time, slots of one backend in parallel. A run
// waiting for a backend takes its lowest-numbered free slot (on an idle node runs land on the
// first GPU served). The queue is bounded: a node holds at most `max_queue` admitted,
// unfinished runs.
#ifndef KILN_SERVER_EVALUATION_SCHEDULER_H_
#define KILN_SERVER_EVALUATION_SCHEDULER_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/backend.h"
#include "server/evaluation/scheduled_run.h"
#include "server/metrics.h"
#include "server/node_info.h"

namespace kiln {

class Scheduler {
 public:
  // Starts `compile_threads` compile threads and one thread per device of each backend.
  // `metrics` (never null) hears how long each device slot was held; it must outlive this.
  // `compile_nice` (0 to 19) is added to the nice value of the compile threads (at most 19), and
  // so of every compiler and check they start (a process inherits the nice value of the thread
  // that forked it): while nvcc runs for queued runs, the run holding a device slot (its
  // worker's checks between timed calls, the harness judging its outputs) gets the CPU first.
  Scheduler(int compile_threads, int max_queue, const std::vector<NodeBackend>& backends,
            Metrics* metrics = NullMetrics(), int compile_nice = 0);
  // Stop().
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Reserves room for one run. UNAVAILABLE "draining" once StopAdmitting was called;
  // RESOURCE_EXHAUSTED when max_queue runs are admitted and unfinished.
  absl::Status Reserve();
  // Returns a reservation whose run was never created.
  void Release();
  // Queues a created run; it holds a reservation, returned when the run has finished.
  void Submit(std::shared_ptr<ScheduledRun> run);

  // Every later Reserve fails with UNAVAILABLE "draining".
  void StopAdmitting();
  bool admitting() const;
  // Blocks until every reserved run has finished.
  void WaitUntilIdle();
  // StopAdmitting, WaitUntilIdle, then joins the threads. Idempotent.
  void Stop();

  // Queue depth, runs compiling or on a device, busy devices (runs_archived is left 0).
  NodeLoad Load() const;

 private:
  void CompileLoop(int nice);
  void DeviceLoop(size_t backend, int device);
  void Done();  // a run has finished: give back its reservation
  // Whether `device` is the lowest-numbered free slot of `backend`; mu_ held.
  bool FirstFreeSlot(size_t backend, int device) const;
  // Adds the time since the last tick to the pending and held-while-pending totals; mu_ held,
  // called before reserved_ or busy_ change (and when they are read).
  void Tick() const;

  const int max_queue_;
  Metrics* const metrics_;
  std::vector<std::string> backend_names_;
  mutable std::mutex mu_;
  std::condition_variable work_;                           // a queue changed, or stopping_
  std::condition_variable idle_;                           // reserved_ went down
  std::deque<std::shared_ptr<ScheduledRun>> compile_queue_;  // guarded by mu_
  std::vector<std::deque<std::shared_ptr<ScheduledRun>>> device_queues_;  // per backend; mu_
  std::vector<std::vector<bool>> busy_;  // [backend][device]; guarded by mu_
  int reserved_ = 0;                     // admitted, unfinished; guarded by mu_
  int compiling_ = 0;                    // guarded by mu_
  bool admitting_ = true;                // guarded by mu_
  bool stopping_ = false;                // guarded by mu_
  mutable absl::Time last_tick_ = absl::Now();       // mu_
  mutable double pending_s_ = 0;                     // mu_
  mutable double held_while_pending_slot_s_ = 0;     // mu_
  std::vector<std::thread> threads_;
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_SCHEDULER_H_
