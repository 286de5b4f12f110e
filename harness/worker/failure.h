// How the worker carries the evaluation status of a failure through absl::Status: integrity
// checks fail with Rejected(...); everything else (solution errors, unreadable blobs, bad
// requests) is a RUNTIME_ERROR. Errors returned unchanged by the timing protocol keep the mark.
#ifndef KILN_HARNESS_WORKER_FAILURE_H_
#define KILN_HARNESS_WORKER_FAILURE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

inline constexpr absl::string_view kEvaluationStatusPayload =
    "type.kiln.dev/kiln.v1.EvaluationStatus";

// An integrity or policy check failed; `reason` names the check ("input mutation: ...").
inline absl::Status Rejected(absl::string_view reason) {
  absl::Status status = absl::FailedPreconditionError(reason);
  status.SetPayload(kEvaluationStatusPayload, absl::Cord(v1::EvaluationStatus_Name(v1::REJECTED)));
  return status;
}

// The evaluation status a failed absl::Status stands for: REJECTED when marked by Rejected(),
// RUNTIME_ERROR otherwise.
inline v1::EvaluationStatus FailureStatus(const absl::Status& status) {
  auto mark = status.GetPayload(kEvaluationStatusPayload);
  v1::EvaluationStatus parsed;
  if (mark && v1::EvaluationStatus_Parse(std::string(*mark), &parsed)) return parsed;
  return v1::RUNTIME_ERROR;
}

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_FAILURE_H_
