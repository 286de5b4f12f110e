#include "harness/model/unknown_definition.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {

std::string UnknownDefinitionMessage(const std::string& name,
                                     const std::vector<std::string>& registered) {
  constexpr size_t kShown = 20;
  if (registered.empty()) {
    return absl::StrCat("unknown definition '", name,
                        "' (no definition is registered on this node)");
  }
  std::vector<std::string> shown(registered.begin(),
                                 registered.begin() + std::min(kShown, registered.size()));
  std::string more;
  if (registered.size() > kShown) {
    more = absl::StrCat(", and ", registered.size() - kShown, " more (kiln defs list)");
  }
  return absl::StrCat("unknown definition '", name,
                      "' (registered on this node: ", absl::StrJoin(shown, ", "), more, ")");
}

}  // namespace kiln
