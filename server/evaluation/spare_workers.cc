#include "server/evaluation/spare_workers.h"

#include <utility>

#include "harness/common/files.h"

namespace kiln {

std::unique_ptr<SpareWorkers::Spare> SpareWorkers::Take(const std::string& slot) {
  std::unique_ptr<Spare> spare;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = spares_.find(slot);
    if (it == spares_.end()) return nullptr;
    spare = std::move(it->second);
    spares_.erase(it);
  }
  if (spare->session->alive()) return spare;
  const std::string dir = spare->worker.dir;
  spare.reset();
  (void)RemoveTree(dir);
  return nullptr;
}

bool SpareWorkers::Has(const std::string& slot) {
  std::lock_guard<std::mutex> lock(mu_);
  return spares_.count(slot) != 0;
}

void SpareWorkers::Put(const std::string& slot, std::unique_ptr<Spare> spare) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& kept = spares_[slot];
    if (kept == nullptr) {
      kept = std::move(spare);
      return;
    }
  }
  const std::string dir = spare->worker.dir;
  spare.reset();
  (void)RemoveTree(dir);
}

SpareWorkers::~SpareWorkers() {
  for (auto& [slot, spare] : spares_) {
    const std::string dir = spare->worker.dir;
    spare.reset();
    (void)RemoveTree(dir);
  }
}

}  // namespace kiln
