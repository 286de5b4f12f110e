// Where one run's EvaluateEvents go: the Evaluate call that admitted it. A run sends any number
// of progress events, then exactly one final event through Close; after Close it never touches
// the sink again. Implementations must accept events from any thread and must not block on the
// client (a slow or vanished client never holds up the device slot).
#ifndef KILN_SERVER_EVENT_SINK_H_
#define KILN_SERVER_EVENT_SINK_H_

#include "kiln/v1/harness.pb.h"

namespace kiln {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void Send(const v1::EvaluateEvent& event) = 0;
  // The final event; releases the sink.
  virtual void Close(const v1::EvaluateEvent& event) = 0;
};

}  // namespace kiln

#endif  // KILN_SERVER_EVENT_SINK_H_
