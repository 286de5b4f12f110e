#include "harness/verify/own_kernels.h"

#include <cctype>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "harness/common/demangle.h"
#include "harness/verify/integrity_policy.h"

namespace kiln::integrity {
namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The identifier starting at `pos` (after blanks), advancing `pos` past it; "" when none.
std::string NextIdentifier(const std::string& text, size_t& pos) {
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  const size_t start = pos;
  while (pos < text.size() && IsIdentChar(text[pos])) ++pos;
  return text.substr(start, pos - start);
}

// Skips a balanced (...) starting at `pos` (which holds '('); false when unbalanced.
bool SkipParens(const std::string& text, size_t& pos) {
  int depth = 0;
  for (; pos < text.size(); ++pos) {
    if (text[pos] == '(') ++depth;
    if (text[pos] == ')' && --depth == 0) {
      ++pos;
      return true;
    }
  }
  return false;
}

// Calls fn(position after the word) for every occurrence of `word` as a whole identifier.
template <typename Fn>
void ForEachWord(const std::string& text, std::string_view word, Fn fn) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at > 0 && IsIdentChar(text[at - 1])) || (end < text.size() && IsIdentChar(text[end]))) {
      continue;
    }
    fn(end);
  }
}

// `__global__ [attributes, return type] NAME(`: the identifier right before the first '(' that
// is not an attribute's (__launch_bounds__(...), __attribute__((...)), __declspec(...)).
void AddCudaKernels(const std::string& text, std::set<std::string>& out) {
  ForEachWord(text, "__global__", [&](size_t pos) {
    std::string last;
    while (pos < text.size() && text[pos] != ';' && text[pos] != '{') {
      const char c = text[pos];
      if (IsIdentChar(c)) {
        last = NextIdentifier(text, pos);
        continue;
      }
      if (c == '(') {
        if (last == "__launch_bounds__" || last == "__attribute__" || last == "__declspec" ||
            last == "alignas") {
          if (!SkipParens(text, pos)) break;
          last.clear();
          continue;
        }
        if (!last.empty()) out.insert(last);
        break;
      }
      ++pos;
    }
  });
}

// A Python function under a decorator whose last name is jit / autotune / heuristics
// (`@triton.jit`, `@jit`, `@triton.autotune(...)` stacked on `@triton.jit`).
void AddTritonKernels(const std::string& text, std::set<std::string>& out) {
  bool decorated = false;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    absl::string_view line = absl::StripLeadingAsciiWhitespace(raw);
    if (absl::ConsumePrefix(&line, "@")) {
      const size_t end = line.find_first_of("( \t\r#");
      absl::string_view name = line.substr(0, end);
      const size_t dot = name.rfind('.');
      if (dot != absl::string_view::npos) name = name.substr(dot + 1);
      if (name == "jit" || name == "autotune" || name == "heuristics") decorated = true;
      continue;
    }
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    // Decorator arguments may span lines (autotune's configs); the decorated def ends them.
    const bool is_def = absl::ConsumePrefix(&line, "def ");
    if (decorated && is_def) {
      std::string s(line);
      size_t pos = 0;
      std::string name = NextIdentifier(s, pos);
      if (!name.empty()) out.insert(name);
    }
    if (is_def || absl::StartsWith(line, "class ")) decorated = false;
  }
}

void AddNamespaces(const std::string& text, std::set<std::string>& out) {
  ForEachWord(text, "namespace", [&](size_t pos) {
    // `namespace a::b {` declares both.
    while (true) {
      std::string name = NextIdentifier(text, pos);
      if (name.empty()) break;
      out.insert(name);
      if (text.compare(pos, 2, "::") != 0) break;
      pos += 2;
    }
  });
}

// Strips a balanced <...> suffix.
std::string StripTemplateArguments(std::string name) {
  if (name.empty() || name.back() != '>') return name;
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == '>') ++depth;
    if (name[i] == '<' && --depth == 0) return name.substr(0, i);
  }
  return name;
}

}  // namespace

SourceKernels KernelsOfSources(const v1::Solution& solution) {
  SourceKernels out;
  for (const v1::SourceFile& file : solution.sources()) {
    const std::string& text = file.content();
    AddCudaKernels(text, out.kernels);
    if (absl::EndsWith(file.path(), ".py")) AddTritonKernels(text, out.kernels);
    AddNamespaces(text, out.namespaces);
  }
  return out;
}

std::string KernelFunctionName(const std::string& profiler_name) {
  std::string name =
      absl::StrReplaceAll(Demangle(profiler_name), {{"(anonymous namespace)::", ""}});
  // The parameter list: the first '(' outside template arguments.
  int depth = 0;
  size_t end = name.size();
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && depth > 0) --depth;
    if (name[i] == '(' && depth == 0) {
      end = i;
      break;
    }
  }
  name = StripTemplateArguments(std::string(absl::StripAsciiWhitespace(name.substr(0, end))));
  // The return type of a template function ("void at::native::k"): the last word outside <...>.
  depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == '>') ++depth;
    if (name[i] == '<' && depth > 0) --depth;
    if (name[i] == ' ' && depth == 0) return name.substr(i + 1);
  }
  return name;
}

bool IsOwnKernel(const std::string& profiler_name, const SourceKernels& own) {
  const std::string function = KernelFunctionName(profiler_name);
  std::vector<std::string> parts = absl::StrSplit(function, "::");
  if (parts.empty()) return false;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (own.namespaces.count(parts[i]) == 0) return false;
  }
  const std::string& base = parts.back();
  if (own.kernels.count(base) > 0) return true;
  // An older Triton's specialization suffix: NAME_0d1d2de.
  const size_t underscore = base.rfind('_');
  if (underscore == std::string::npos || underscore + 1 == base.size()) return false;
  for (size_t i = underscore + 1; i < base.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(base[i])) && base[i] != 'c' &&
        base[i] != 'd' && base[i] != 'e') {
      return false;
    }
  }
  return parts.size() == 1 && own.kernels.count(base.substr(0, underscore)) > 0;
}

std::optional<std::string> NoOwnKernel(const std::vector<std::string>& launched,
                                       const SourceKernels& own) {
  for (const std::string& name : launched) {
    if (IsOwnKernel(name, own)) return std::nullopt;
  }
  const std::string defined =
      own.kernels.empty()
          ? "its sources define no Triton or CUDA kernel"
          : absl::StrCat("its sources define ", absl::StrJoin(own.kernels, ", "));
  if (launched.empty()) {
    return absl::StrCat("the timed calls launched no kernel at all (", defined, ")");
  }
  std::vector<std::string> shown;
  for (size_t i = 0; i < launched.size() && i < 4; ++i) {
    std::string f = KernelFunctionName(launched[i]);
    if (f.size() > 120) f = f.substr(0, 117) + "...";
    shown.push_back(std::move(f));
  }
  if (launched.size() > shown.size()) {
    shown.push_back(absl::StrCat("and ", launched.size() - shown.size(), " more"));
  }
  return absl::StrCat("the timed calls launched ", launched.size(),
                      launched.size() == 1 ? " kernel" : " kernels",
                      ", none of them the solution's own (", defined,
                      "): the work was done by torch or the libraries under it: ",
                      absl::StrJoin(shown, "; "));
}

std::optional<OwnKernelFinding> JudgeOwnKernel(const v1::Definition& def,
                                               const v1::Solution& solution,
                                               const v1::TimingResult& timing) {
  const std::string& language = solution.spec().language();
  if (!RequiresOwnKernel(def) || (language != "python" && language != "triton") ||
      timing.timer() != "cupti") {
    return std::nullopt;
  }
  std::optional<std::string> finding =
      NoOwnKernel({timing.kernels().begin(), timing.kernels().end()}, KernelsOfSources(solution));
  if (!finding.has_value()) return std::nullopt;
  return OwnKernelFinding{Reason(kNoOwnKernel, *finding), AllowsTorchOnly(def)};
}

std::optional<std::string> OwnKernelCheckNotMade(const v1::Definition& def,
                                                 const v1::Solution& solution,
                                                 const v1::TimingResult& timing) {
  const std::string& language = solution.spec().language();
  if (!RequiresOwnKernel(def) || (language != "python" && language != "triton") ||
      timing.timer() == "cupti") {
    return std::nullopt;
  }
  return absl::StrCat("own-kernel check: not made: the ",
                      timing.timer().empty() ? std::string("run's") : timing.timer(),
                      " timer records no kernels, so ", kNoOwnKernel, " and ", kOwnKernelShare,
                      " were not checked (they are on a CUDA node, whose CUPTI timer sees every "
                      "kernel)");
}

}  // namespace kiln::integrity
