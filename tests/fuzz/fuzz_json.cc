// libFuzzer target: the flashinfer-bench JSON documents kiln reads from clients and files. The
// first byte picks the parser; the rest is the document. Parsed documents are written back out,
// which walks every field the parser accepted.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "harness/model/json_interop.h"
#include "harness/model/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view doc(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      if (auto def = kiln::ParseDefinitionJson(doc); def.ok()) {
        (void)kiln::ValidateDefinition(*def);
        (void)kiln::DefinitionToJson(*def);
      }
      break;
    case 1:
      if (auto w = kiln::ParseWorkloadJson(doc); w.ok()) (void)kiln::WorkloadToJson(*w);
      break;
    case 2:
      (void)kiln::ParseWorkloadsJsonl(doc, "fuzz");
      break;
    case 3:
      if (auto s = kiln::ParseSolutionJson(doc); s.ok()) (void)kiln::SolutionToJson(*s);
      break;
    case 4:
      if (auto t = kiln::ParseTraceJson(doc); t.ok()) (void)kiln::TraceToJson(*t);
      break;
  }
  return 0;
}
