// Removes a run's job folders off the run's path. A workload's folders hold every trial's output
// files of the reference and the candidate (1.4 GiB for an RMSNorm at batch 14418, 24 GiB for a
// KernelBench problem with a 6 GiB output); freeing that much of a tmpfs takes a CPU tens of
// milliseconds to seconds, which the run would otherwise spend holding its device slot while
// the next queued run waits. Discard renames the folder at once (its name is free again, and
// nothing of the run reads it any more) and one thread of this class removes it.
#ifndef KILN_SERVER_EVALUATION_FOLDER_REAPER_H_
#define KILN_SERVER_EVALUATION_FOLDER_REAPER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace kiln {

class FolderReaper {
 public:
  // `log`: a removal that took 10 ms or more is logged (folder_removed, with its seconds): the
  // time a run would have held its slot for it.
  explicit FolderReaper(bool log = false);
  // Removes everything discarded so far (then calls its `then`), and stops.
  ~FolderReaper();
  FolderReaper(const FolderReaper&) = delete;
  FolderReaper& operator=(const FolderReaper&) = delete;

  // Renames `path` to a hidden sibling (".discarded-N-NAME": the same file system, so the
  // rename is one metadata change) and queues it for removal; `then` runs on the reaper's
  // thread once it is removed, after every folder discarded before it. A path that does not
  // exist just runs `then` in order; one that cannot be renamed is removed by the queue under
  // its own name.
  void Discard(const std::string& path, std::function<void()> then = {});

  // Blocks until everything discarded so far is removed. True if there was anything to wait
  // for.
  bool Flush();

  // Folders taken off the queue for removal.
  int64_t removed() const;

 private:
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable work_, idle_;
  std::deque<std::pair<std::string, std::function<void()>>> queue_;
  const bool log_;
  bool stopping_ = false;
  bool removing_ = false;
  int64_t next_ = 0;
  int64_t removed_ = 0;
  std::thread thread_;
};

// Discards `path` through `reaper`, or removes it at once when `reaper` is null (then `then`
// runs here).
void DiscardFolder(FolderReaper* reaper, const std::string& path,
                   std::function<void()> then = {});

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_FOLDER_REAPER_H_
