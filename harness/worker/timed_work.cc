#include "harness/worker/timed_work.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

namespace kiln {

void RecordTimedWork(std::vector<TimedWork> work, v1::TimingResult* timing) {
  constexpr size_t kMaxEntries = 128, kMaxSignature = 4096;
  constexpr std::string_view kKernel = "kernel ";
  std::sort(work.begin(), work.end(), [](const TimedWork& a, const TimedWork& b) {
    return a.total_ms != b.total_ms ? a.total_ms > b.total_ms : a.signature < b.signature;
  });
  std::vector<std::string> kernels;
  v1::GpuWork* other = nullptr;
  for (const TimedWork& w : work) {
    const bool kernel = w.signature.compare(0, kKernel.size(), kKernel) == 0;
    if (kernel && kernels.size() < kMaxEntries) {
      kernels.push_back(w.signature.substr(kKernel.size(), kMaxSignature));
    }
    if (static_cast<size_t>(timing->gpu_work_size()) + 1 < kMaxEntries) {
      v1::GpuWork* entry = timing->add_gpu_work();
      entry->set_signature(w.signature.substr(0, kMaxSignature));
      entry->set_total_ms(w.total_ms);
      entry->set_launches(w.launches);
      continue;
    }
    if (other == nullptr) {
      other = timing->add_gpu_work();
      other->set_signature("(other work)");
    }
    other->set_total_ms(other->total_ms() + w.total_ms);
    other->set_launches(other->launches() + w.launches);
  }
  std::sort(kernels.begin(), kernels.end());
  for (std::string& name : kernels) timing->add_kernels(std::move(name));
}

}  // namespace kiln
