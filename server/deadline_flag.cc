#include "server/deadline_flag.h"

#include <chrono>

namespace kiln {

DeadlineFlag::DeadlineFlag(const std::atomic<bool>* parent, double timeout_s)
    : watcher_([this, parent, timeout_s] { Watch(parent, timeout_s); }) {}

DeadlineFlag::~DeadlineFlag() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  watcher_.join();
}

void DeadlineFlag::Watch(const std::atomic<bool>* parent, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto limit = std::chrono::duration<double>(timeout_s);
  std::unique_lock<std::mutex> lock(mu_);
  // Polling: the parent flag is a plain atomic that nobody signals.
  while (!stop_) {
    if (parent != nullptr && parent->load()) {
      flag_ = true;
      return;
    }
    if (timeout_s > 0 && Clock::now() - start >= limit) {
      expired_ = true;
      flag_ = true;
      return;
    }
    wake_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

}  // namespace kiln
