// What the Scheduler drives through its stages: an Evaluation on a real node, a stand-in in
// tests. The stages are called in order, each from one thread at a time: Compile (compile pool),
// then RunOnDevice (a device slot of backend()) only when NeedsDevice(), then Finish.
#ifndef KILN_SERVER_EVALUATION_SCHEDULED_RUN_H_
#define KILN_SERVER_EVALUATION_SCHEDULED_RUN_H_

#include <string>

namespace kiln {

class ScheduledRun {
 public:
  virtual ~ScheduledRun() = default;
  virtual void Compile() = 0;
  // True after a successful Compile: the run needs a device slot of backend().
  virtual bool NeedsDevice() const = 0;
  virtual const std::string& backend() const = 0;
  // Runs on device slot `device_slot` of backend() (the slot's index among that backend's).
  virtual void RunOnDevice(int device_slot) = 0;
  // Always the last call.
  virtual void Finish() = 0;
  // After RunOnDevice: the GPU time, in seconds, of the timed calls the run made on its slot
  // (the candidate's and every baseline it timed, not cached ones), from the timers' records;
  // 0 where the timer records none (host, events).
  virtual double GpuWorkSeconds() const { return 0; }
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_SCHEDULED_RUN_H_
