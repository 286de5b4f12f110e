#include "harness/model/solution_digest.h"

#include "absl/strings/str_cat.h"
#include "harness/common/sha256.h"

namespace kiln {

namespace {

// A list as its length, then its items: ["a"], ["b"] and ["a", "b"] differ.
template <typename List>
void AddList(Sha256& hash, const List& items) {
  hash.AddPart(absl::StrCat(items.size()));
  for (const auto& item : items) hash.AddPart(item);
}

// An optional field as "unset" or "set" and its value: unset and empty differ.
void AddOptional(Sha256& hash, bool present, const std::string& value) {
  hash.AddPart(present ? "set" : "unset");
  if (present) hash.AddPart(value);
}

}  // namespace

std::string SolutionDigest(const v1::Solution& s) {
  Sha256 hash;
  hash.AddPart("kiln.v1.Solution/1");  // the layout below; a new field gets a new version
  hash.AddPart(s.name());
  hash.AddPart(s.definition());
  hash.AddPart(s.author());
  hash.AddPart(s.description());
  const v1::BuildSpec& spec = s.spec();
  hash.AddPart(spec.language());
  AddList(hash, spec.target_hardware());
  hash.AddPart(spec.entry_point());
  AddList(hash, spec.dependencies());
  AddOptional(hash, spec.has_destination_passing_style(),
              spec.destination_passing_style() ? "true" : "false");
  AddOptional(hash, spec.has_binding(), spec.binding());
  hash.AddPart(absl::StrCat(s.sources_size()));
  for (const v1::SourceFile& f : s.sources()) {
    hash.AddPart(f.path());
    hash.AddPart(f.content());
  }
  return hash.HexDigest();
}

}  // namespace kiln
