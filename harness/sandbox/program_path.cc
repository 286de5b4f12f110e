#include "harness/sandbox/program_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln {

namespace {

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";

std::string SearchPath(const std::vector<std::string>& env) {
  for (const std::string& kv : env) {
    if (absl::StartsWith(kv, "PATH=")) return kv.substr(5);
  }
  if (!env.empty()) return kDefaultPath;  // an explicit environment without PATH
  const char* path = std::getenv("PATH");
  return (path != nullptr && *path != '\0') ? path : kDefaultPath;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

absl::StatusOr<std::string> FindProgram(const std::string& name,
                                        const std::vector<std::string>& env) {
  if (name.empty()) return absl::InvalidArgumentError("empty program name");
  if (absl::StrContains(name, '/')) return name;
  const std::string path = SearchPath(env);
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    // An empty element means the current directory, as in the shell.
    std::string candidate = dir.empty() ? name : absl::StrCat(dir, "/", name);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat("program '", name, "' not found in PATH (", path, ")"));
}

}  // namespace kiln
