#include "web/source_diff.h"

#include <dtl/dtl.hpp>

#include <map>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln::web {

namespace {

std::vector<std::string> Lines(const std::string& text) {
  if (text.empty()) return {};
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // a final newline
  return lines;
}

std::string FileDiff(const std::string& path, const std::string& before,
                     const std::string& after, bool existed, bool exists) {
  if (existed && exists && before == after) return "";
  dtl::Diff<std::string, std::vector<std::string>> diff(Lines(before), Lines(after));
  diff.onHuge();
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream hunks;
  diff.printUnifiedFormat(hunks);
  return absl::StrCat("--- ", existed ? "a/" + path : "/dev/null", "\n+++ ",
                      exists ? "b/" + path : "/dev/null", "\n", hunks.str());
}

}  // namespace

std::string UnifiedSourceDiff(const v1::Solution& before, const v1::Solution& after) {
  std::map<std::string, std::string> old_files;
  for (const v1::SourceFile& f : before.sources()) old_files[f.path()] = f.content();
  std::string out;
  for (const v1::SourceFile& f : after.sources()) {
    auto it = old_files.find(f.path());
    const bool existed = it != old_files.end();
    absl::StrAppend(&out, FileDiff(f.path(), existed ? it->second : "", f.content(), existed,
                                   true));
    if (existed) old_files.erase(it);
  }
  for (const auto& [path, content] : old_files) {
    absl::StrAppend(&out, FileDiff(path, content, "", true, false));
  }
  return out;
}

}  // namespace kiln::web
