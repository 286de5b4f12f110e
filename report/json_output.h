// JSON the CLI prints with --json: protobuf messages through protobuf's JSON mapping (field
// names as in the .proto), traces as flashinfer-bench Trace documents.
#ifndef KILN_REPORT_JSON_OUTPUT_H_
#define KILN_REPORT_JSON_OUTPUT_H_

#include <google/protobuf/message.h>
#include <google/protobuf/repeated_ptr_field.h>

#include <nlohmann/json.hpp>
#include <string>

#include "kiln/v1/types.pb.h"

namespace kiln::cli {

using Json = nlohmann::ordered_json;

// The message in protobuf's JSON mapping, with proto field names and default values included.
Json ProtoToJson(const google::protobuf::Message& message);

// flashinfer-bench Trace documents as `kiln runs export` writes them (kiln-only statuses mapped
// to official ones, the exact status kept in the log and, for REJECTED, in correctness.extra;
// see docs/flashinfer-export.md).
// Each also carries kiln's TraceDetail under "kiln" (timings, reference source, baselines,
// integrity findings); flashinfer-bench's parser ignores the extra member.
Json TracesToJson(const google::protobuf::RepeatedPtrField<v1::Trace>& traces);

// Pretty-printed, ending in a newline.
std::string Dump(const Json& json);

}  // namespace kiln::cli

#endif  // KILN_REPORT_JSON_OUTPUT_H_
