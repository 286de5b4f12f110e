#include "server/command_line.h"

#include <algorithm>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace kiln {

namespace {

// One "--name[=value]" argument.
struct FlagArg {
  std::string name;  // without leading dashes
  bool has_value = false;
  std::string value;
};

bool IsFlagArg(const std::string& arg) { return arg.size() > 1 && arg[0] == '-' && arg != "--"; }

FlagArg SplitFlag(const std::string& arg) {
  FlagArg f;
  absl::string_view rest(arg);
  rest.remove_prefix(rest.substr(0, 2) == "--" ? 2 : 1);
  auto eq = rest.find('=');
  f.name = std::string(rest.substr(0, eq));
  if (eq != absl::string_view::npos) {
    f.has_value = true;
    f.value = std::string(rest.substr(eq + 1));
  }
  return f;
}

std::string Dashed(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return absl::StrCat("--", name);
}

// Whether the argument after `arg` is its value ("--data_dir DIR").
bool TakesNextArg(const std::string& arg) {
  FlagArg f = SplitFlag(arg);
  if (f.has_value) return false;
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(f.name);
  return flag != nullptr && !flag->IsOfType<bool>();
}

}  // namespace

std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  bool value_next = false;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& arg = args[i];
    if (arg == "--") break;
    if (value_next || !IsFlagArg(arg)) {
      value_next = false;
      continue;
    }
    size_t start = arg.find_first_not_of('-');
    size_t end = std::min(arg.find('='), arg.size());
    for (size_t c = start; c < end; ++c) {
      if (arg[c] == '-') arg[c] = '_';
    }
    value_next = TakesNextArg(arg);
  }
  return args;
}

std::string CheckFlags(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (!IsFlagArg(args[i])) continue;
    FlagArg f = SplitFlag(args[i]);
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(f.name);
    if (flag == nullptr && f.name.rfind("no", 0) == 0 && !f.has_value) {
      absl::CommandLineFlag* negated = absl::FindCommandLineFlag(f.name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) continue;  // --noquiet
    }
    if (flag == nullptr) return absl::StrCat("unknown flag ", Dashed(f.name));
    if (!f.has_value && !flag->IsOfType<bool>()) {
      if (i + 1 >= args.size()) return absl::StrCat(Dashed(f.name), " needs a value");
      f.value = args[++i];
      f.has_value = true;
    }
    if (!f.has_value) continue;
    std::string error;
    // Parsing sets the flag; absl parses the same value again right after.
    if (!flag->ParseFrom(f.value, &error)) {
      return absl::StrCat(Dashed(f.name), ": ", error);
    }
  }
  return "";
}

}  // namespace kiln
