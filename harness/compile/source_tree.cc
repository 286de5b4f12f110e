#include "harness/compile/source_tree.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "harness/common/files.h"

namespace kiln {

namespace {

constexpr size_t kMaxPathBytes = 1024;
constexpr size_t kMaxComponentBytes = 255;

absl::Status BadPath(int index, const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("sources[", index, "].path: '", path, "' ", why));
}

absl::Status CheckPath(int index, const std::string& path) {
  if (path.empty()) return BadPath(index, path, "is empty");
  if (path.size() > kMaxPathBytes) return BadPath(index, path.substr(0, 64), "is too long");
  if (path.find('\0') != std::string::npos) return BadPath(index, "", "contains a NUL byte");
  if (path.front() == '/') return BadPath(index, path, "must be relative");
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty()) return BadPath(index, path, "has an empty component");
    if (part == "." || part == "..") {
      return BadPath(index, path, absl::StrCat("must not contain '", part, "'"));
    }
    if (part.size() > kMaxComponentBytes) return BadPath(index, path, "has a too long name");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSourcePaths(const v1::Solution& solution) {
  std::set<std::string> files;
  for (int i = 0; i < solution.sources_size(); ++i) {
    const std::string& path = solution.sources(i).path();
    if (absl::Status s = CheckPath(i, path); !s.ok()) return s;
    if (!files.insert(path).second) return BadPath(i, path, "appears twice");
  }
  // "a" and "a/b" cannot both exist.
  for (int i = 0; i < solution.sources_size(); ++i) {
    const std::string& path = solution.sources(i).path();
    for (size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      if (files.count(path.substr(0, slash)) != 0) {
        return BadPath(i, path,
                       absl::StrCat("lies under '", path.substr(0, slash), "', which is a file"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status WriteSources(const v1::Solution& solution, const std::string& dir) {
  if (absl::Status s = ValidateSourcePaths(solution); !s.ok()) return s;
  for (const v1::SourceFile& source : solution.sources()) {
    std::string path = absl::StrCat(dir, "/", source.path());
    if (absl::Status s = MakeDirs(path.substr(0, path.rfind('/'))); !s.ok()) return s;
    if (absl::Status s = WriteFile(path, source.content()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace kiln
