// The "samples" artifact of a run: every timed call's latency of one workload and role
// (TimingResult.samples_ms), as the harness archives it and the web console reads it back.
#ifndef KILN_HARNESS_MODEL_SAMPLES_ARTIFACT_H_
#define KILN_HARNESS_MODEL_SAMPLES_ARTIFACT_H_

#include <string>
#include <vector>

#include "google/protobuf/repeated_field.h"

namespace kiln {

// {"unit": "ms", "samples_ms": [...]}, each sample with 9 significant digits.
std::string SamplesArtifact(const google::protobuf::RepeatedField<double>& samples_ms);
// The samples of such an artifact; empty when `content` is not one.
std::vector<double> ParseSamplesArtifact(const std::string& content);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_SAMPLES_ARTIFACT_H_
