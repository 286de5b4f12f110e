// Where a CUDA toolkit may be installed. One list for every part of kiln that looks for one
// (nvcc, libcudart, CUPTI), so they all search the same places in the same order.
#ifndef KILN_HARNESS_COMMON_CUDA_TOOLKIT_H_
#define KILN_HARNESS_COMMON_CUDA_TOOLKIT_H_

#include <string>
#include <vector>

namespace kiln {

// Toolkit roots, in search order: $CUDA_HOME, $CUDA_PATH, then the root of the toolkit this kiln
// was built against, as the build found it (none when it was built without one). Entries are
// distinct; unset or empty variables are skipped.
std::vector<std::string> CudaToolkitRoots();

}  // namespace kiln

#endif  // KILN_HARNESS_COMMON_CUDA_TOOLKIT_H_
