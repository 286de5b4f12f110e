#include "harness/compile/kernel_resources.h"


#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "harness/common/demangle.h"
#include "nlohmann/json.hpp"

namespace kiln {
namespace {

// The leading count of an item such as "512 bytes smem" or (older ptxas) "4+16 bytes smem".
int64_t LeadingCount(absl::string_view item) {
  absl::string_view number = item.substr(0, item.find(' '));
  int64_t total = 0;
  for (absl::string_view part : absl::StrSplit(number, '+')) {
    int64_t value = 0;
    if (absl::SimpleAtoi(part, &value)) total += value;
  }
  return total;
}

// "Used 10 registers, used 1 barriers, 512 bytes smem, 1024 bytes cumulative stack size,
// 364 bytes cmem[0]"; the items vary with the ptxas version, unknown ones are skipped.
void ParseUsage(absl::string_view text, KernelResources* k) {
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::string lower = absl::AsciiStrToLower(item);
    if (absl::StartsWith(lower, "used ")) {
      absl::string_view rest = item.substr(5);
      if (absl::EndsWith(lower, " registers")) k->registers = LeadingCount(rest);
      if (absl::EndsWith(lower, " barriers")) k->barriers = LeadingCount(rest);
    } else if (absl::EndsWith(lower, " bytes smem")) {
      k->shared_bytes = LeadingCount(item);
    } else if (absl::StrContains(lower, " bytes cmem[")) {
      k->constant_bytes += LeadingCount(item);
    } else if (absl::EndsWith(lower, " bytes cumulative stack size")) {
      k->cumulative_stack_bytes = LeadingCount(item);
    }
  }
}

// "6400 bytes stack frame, 7184 bytes spill stores, 11824 bytes spill loads"
void ParseFrame(absl::string_view text, KernelResources* k) {
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (absl::EndsWith(item, " bytes stack frame")) k->stack_frame_bytes = LeadingCount(item);
    if (absl::EndsWith(item, " bytes spill stores")) k->spill_store_bytes = LeadingCount(item);
    if (absl::EndsWith(item, " bytes spill loads")) k->spill_load_bytes = LeadingCount(item);
  }
}

// True for a "ptxas info    : <text>" line, with *text set to <text>.
bool PtxasInfoText(absl::string_view line, absl::string_view* text) {
  line = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&line, "ptxas info")) return false;
  size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return false;
  *text = absl::StripAsciiWhitespace(line.substr(colon + 1));
  return true;
}

// "Compiling entry function '_Z3addPfi' for 'sm_90a'" -> name and arch.
bool ParseEntryLine(absl::string_view text, std::string* name, std::string* arch) {
  if (!absl::ConsumePrefix(&text, "Compiling entry function '")) return false;
  size_t end = text.find('\'');
  if (end == absl::string_view::npos) return false;
  *name = std::string(text.substr(0, end));
  absl::string_view rest = text.substr(end + 1);
  arch->clear();
  if (size_t open = rest.find('\''); open != absl::string_view::npos) {
    size_t close = rest.find('\'', open + 1);
    if (close != absl::string_view::npos)
      *arch = std::string(rest.substr(open + 1, close - open - 1));
  }
  return true;
}

}  // namespace

std::vector<KernelResources> ParsePtxasResources(absl::string_view log) {
  std::vector<KernelResources> out;
  int current_entry = -1;  // the kernel whose "Used ..." line comes next
  int pending_frame = -1;  // the function whose stack-frame line is the next line
  std::string current_arch;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (pending_frame >= 0 && absl::StrContains(line, " bytes stack frame")) {
      ParseFrame(line, &out[pending_frame]);
      pending_frame = -1;
      continue;
    }
    pending_frame = -1;
    absl::string_view text;
    if (!PtxasInfoText(line, &text)) continue;
    std::string name, arch;
    if (ParseEntryLine(text, &name, &arch)) {
      KernelResources k;
      k.name = name;
      k.demangled = Demangle(name);
      k.arch = arch;
      current_arch = arch;
      out.push_back(std::move(k));
      current_entry = static_cast<int>(out.size()) - 1;
    } else if (absl::ConsumePrefix(&text, "Function properties for ")) {
      std::string function(absl::StripAsciiWhitespace(text));
      if (current_entry >= 0 && out[current_entry].name == function) {
        pending_frame = current_entry;
      } else {
        KernelResources k;
        k.name = function;
        k.demangled = Demangle(function);
        k.arch = current_arch;
        k.entry = false;
        out.push_back(std::move(k));
        pending_frame = static_cast<int>(out.size()) - 1;
      }
    } else if (absl::StartsWith(text, "Used ")) {
      if (current_entry >= 0) ParseUsage(text, &out[current_entry]);
    } else if (absl::StrContains(text, " bytes gmem")) {
      // The first line of each ptxas run (one per architecture and translation unit).
      current_entry = -1;
      current_arch.clear();
    }
  }
  return out;
}

std::string RenderKernelResources(const std::vector<KernelResources>& kernels) {
  std::string out;
  for (const KernelResources& k : kernels) {
    absl::StrAppend(&out, k.arch.empty() ? "?" : k.arch, " ", k.demangled);
    if (!k.entry) absl::StrAppend(&out, " [device function]");
    absl::StrAppend(&out, ": ");
    if (k.entry) {
      absl::StrAppend(&out, k.registers, " registers, ", k.shared_bytes, " B shared, ");
    }
    absl::StrAppend(&out, k.stack_frame_bytes, " B stack, ", k.spill_store_bytes,
                    " B spill stores, ", k.spill_load_bytes, " B spill loads");
    if (k.entry) absl::StrAppend(&out, ", ", k.constant_bytes, " B constant");
    absl::StrAppend(&out, "\n");
  }
  return out;
}

std::string KernelResourcesJson(const std::vector<KernelResources>& kernels) {
  nlohmann::json array = nlohmann::json::array();
  for (const KernelResources& k : kernels) {
    array.push_back({{"name", k.name},
                     {"demangled", k.demangled},
                     {"arch", k.arch},
                     {"entry", k.entry},
                     {"registers", k.registers},
                     {"barriers", k.barriers},
                     {"shared_bytes", k.shared_bytes},
                     {"stack_frame_bytes", k.stack_frame_bytes},
                     {"spill_store_bytes", k.spill_store_bytes},
                     {"spill_load_bytes", k.spill_load_bytes},
                     {"cumulative_stack_bytes", k.cumulative_stack_bytes},
                     {"constant_bytes", k.constant_bytes}});
  }
  // Names come from a candidate's build: replace invalid UTF-8 rather than throw.
  return array.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kiln
