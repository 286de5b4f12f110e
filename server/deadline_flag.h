// A cancel flag for work that has its own time limit: it becomes true when the run's cancel flag
// does or when the limit passes, whichever is first. Compiler::Compile takes only a flag, so the
// compile timeout is enforced through one of these.
#ifndef KILN_SERVER_DEADLINE_FLAG_H_
#define KILN_SERVER_DEADLINE_FLAG_H_

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace kiln {

class DeadlineFlag {
 public:
  // `parent` may be null; `timeout_s` <= 0 means no limit.
  DeadlineFlag(const std::atomic<bool>* parent, double timeout_s);
  ~DeadlineFlag();
  DeadlineFlag(const DeadlineFlag&) = delete;
  DeadlineFlag& operator=(const DeadlineFlag&) = delete;

  const std::atomic<bool>* flag() const { return &flag_; }
  // True when the time limit (not the parent) raised the flag.
  bool expired() const { return expired_.load(); }

 private:
  void Watch(const std::atomic<bool>* parent, double timeout_s);

  std::atomic<bool> flag_{false};
  std::atomic<bool> expired_{false};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread watcher_;
};

}  // namespace kiln

#endif  // KILN_SERVER_DEADLINE_FLAG_H_
