#include "server/evaluation/batch_references.h"

#include "harness/common/files.h"

namespace kiln {

BatchReferences::~BatchReferences() {
  for (const std::string& folder : folders_) (void)RemoveTree(folder);
}

std::optional<RoleRun> BatchReferences::Find(int index) const {
  auto it = refs_.find(index);
  if (it == refs_.end()) return std::nullopt;
  return it->second;
}

void BatchReferences::Keep(int index, const RoleRun& ref, const std::string& folder) {
  refs_[index] = ref;
  if (!folder.empty()) folders_.push_back(folder);
}

}  // namespace kiln
