#include "harness/common/cuda_toolkit.h"

#include <algorithm>
#include <cstdlib>

namespace kiln {

std::vector<std::string> CudaToolkitRoots() {
  std::vector<std::string> roots;
  auto add = [&roots](const char* root) {
    if (root == nullptr || *root == '\0') return;
    if (std::find(roots.begin(), roots.end(), root) == roots.end()) roots.emplace_back(root);
  };
  add(std::getenv("CUDA_HOME"));
  add(std::getenv("CUDA_PATH"));
#ifdef KILN_CUDA_TOOLKIT_ROOT
  add(KILN_CUDA_TOOLKIT_ROOT);
#endif
  return roots;
}

}  // namespace kiln
