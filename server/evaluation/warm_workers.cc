#include "server/evaluation/warm_workers.h"

#include <utility>
#include <vector>

namespace kiln {

WarmWorkers::Lease WarmWorkers::Take(const std::string& slot, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& workers = slots_[slot];
  for (auto it = workers.begin(); it != workers.end(); ++it) {
    if (it->key != key) continue;
    Lease lease = std::move(*it);
    workers.erase(it);
    return lease;
  }
  Lease fresh;
  fresh.key = key;
  return fresh;
}

void WarmWorkers::Give(const std::string& slot, Lease lease) {
  std::vector<Lease> dropped;  // ended outside the lock: a worker's exit is awaited
  if (lease.session == nullptr || !lease.session->open()) {
    dropped.push_back(std::move(lease));
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    auto& workers = slots_[slot];
    workers.push_front(std::move(lease));
    while (static_cast<int>(workers.size()) > per_slot_) {
      dropped.push_back(std::move(workers.back()));
      workers.pop_back();
    }
  }
  for (Lease& gone : dropped) {
    gone.session.reset();
    if (discard_ && !gone.dir.empty()) discard_(gone.dir, gone.log_path);
  }
}

}  // namespace kiln
