// The server side of one Evaluate call: a gRPC write reactor that streams a run's events to the
// client. Events come from the run's threads and are written one at a time in order; a slow
// client never blocks the run. Cancelling the call (or its deadline passing) raises the run's
// cancel flag; the run still finishes and is archived, and the call ends CANCELLED.
//
// Lifetime: the reactor deletes itself once gRPC is done with it (OnDone) and, when a run was
// attached, the run has closed it (EventSink::Close).
#ifndef KILN_SERVER_EVALUATE_REACTOR_H_
#define KILN_SERVER_EVALUATE_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>

#include "kiln/v1/harness.pb.h"
#include "server/event_sink.h"

namespace kiln {

class EvaluateReactor final : public grpc::ServerWriteReactor<v1::EvaluateEvent>, public EventSink {
 public:
  EvaluateReactor();

  // The cancel flag the run must watch.
  std::shared_ptr<std::atomic<bool>> cancel_flag() const { return cancel_; }
  // A run will send its events here; it must Close the sink eventually. A batch attaches one
  // run per solution: the call ends after the last of them has closed.
  void AttachRun();
  // Ends the call with `status` (admission failed); no run is attached, or the attached one
  // is released without a final event.
  void Reject(const grpc::Status& status, bool release_run = false);

  // EventSink
  void Send(const v1::EvaluateEvent& event) override;
  void Close(const v1::EvaluateEvent& event) override;

  // grpc::ServerWriteReactor
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  enum class Next { kNothing, kWrite, kFinish };
  // Decides the next operation under mu_; the operation itself is started outside the lock.
  Next NextLocked();
  void Start(Next next);
  void Unref();

  std::shared_ptr<std::atomic<bool>> cancel_;
  std::mutex mu_;
  std::deque<v1::EvaluateEvent> pending_;  // guarded by mu_
  v1::EvaluateEvent writing_event_;        // owned by the write in flight
  bool writing_ = false;                   // guarded by mu_
  bool closed_ = false;                    // the final event is queued; guarded by mu_
  bool broken_ = false;                    // cancelled or a write failed; guarded by mu_
  bool finishing_ = false;                 // Finish was called; guarded by mu_
  grpc::Status finish_status_;             // guarded by mu_
  std::atomic<int> refs_{1};               // gRPC's, plus one per attached run
  int open_runs_ = 0;                      // attached runs not yet closed; guarded by mu_
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATE_REACTOR_H_
