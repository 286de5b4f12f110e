#include "report/json_output.h"

#include <google/protobuf/util/json_util.h>

#include "harness/model/json_interop.h"

namespace kiln::cli {

Json ProtoToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.always_print_enums_as_ints = false;
  std::string text;
  auto status = google::protobuf::util::MessageToJsonString(message, &text, options);
  // Serializing a well-formed message cannot fail; an invalid UTF-8 string can. Keep going with
  // what can be said rather than failing the whole command.
  if (!status.ok()) return Json{{"error", std::string(status.message())}};
  return Json::parse(text, nullptr, false);
}

Json TracesToJson(const google::protobuf::RepeatedPtrField<v1::Trace>& traces) {
  Json out = Json::array();
  for (const v1::Trace& trace : traces) {
    Json parsed = Json::parse(TraceToJson(trace, /*export_kiln_extensions=*/false), nullptr, false);
    if (parsed.is_discarded()) parsed = Json{{"error", "trace is not valid JSON"}};
    if (trace.has_kiln()) parsed["kiln"] = ProtoToJson(trace.kiln());
    out.push_back(std::move(parsed));
  }
  return out;
}

std::string Dump(const Json& json) {
  return json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace kiln::cli
