// What `kiln defs show`, `kiln defs set` and `kiln defs list` print about how a definition is
// judged, and the reading of `kiln defs set`'s flags. Pure: messages in, text or JSON out.
#ifndef KILN_CLIENT_DEFINITION_DETAIL_H_
#define KILN_CLIENT_DEFINITION_DETAIL_H_

#include <string>

#include "absl/status/statusor.h"
#include "client/cli.h"
#include "kiln/v1/harness.pb.h"
#include "report/json_output.h"

namespace kiln::cli {

// DefinitionSettings from --atol, --rtol, --required-matched-ratio, --warmup, --iterations and
// --trials (only the flags given are set). INVALID_ARGUMENT naming the command and the flag for
// a value that is not a number or out of range ("kiln defs set: --atol: must be ...").
absl::StatusOr<v1::DefinitionSettings> SettingsFromFlags(const ParsedArgs& args,
                                                         const std::string& command);

// `kiln defs list`'s settings column: what an operator set, "atol=1 rtol=0.3"; "-" for none.
std::string SettingsColumn(const v1::DefinitionSummary& summary);

// `kiln defs show`: name, op_type, axes, inputs, outputs, tags, workloads, native reference,
// integrity, then a table of the effective settings (value, source, default).
std::string DefinitionDetailText(const v1::DefinitionDetail& detail);

// The same as one object: {"name", "op_type", "axes", "inputs", "outputs", "tags",
// "description", "workload_count", "builtin", "native_reference", "integrity_warning",
// "settings": {NAME: {"value", "source", "default"}}}.
Json DefinitionDetailJson(const v1::DefinitionDetail& detail);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_DEFINITION_DETAIL_H_
