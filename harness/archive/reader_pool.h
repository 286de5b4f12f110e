// Read-only connections to the archive, opened on demand up to a cap and reused. In WAL mode
// readers see the last committed state and are never blocked by the writer, so listing runs
// stays fast while a long write is in progress.
#ifndef KILN_HARNESS_ARCHIVE_READER_POOL_H_
#define KILN_HARNESS_ARCHIVE_READER_POOL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "sqlite/sqlite_connection.h"

namespace kiln::archive {

class ReaderPool {
 public:
  // A connection held exclusively until the lease is destroyed.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Connection& operator*() const { return *conn_; }
    Connection* operator->() const { return conn_.get(); }

   private:
    friend class ReaderPool;
    Lease(ReaderPool* pool, std::unique_ptr<Connection> conn);
    ReaderPool* pool_;
    std::unique_ptr<Connection> conn_;
  };

  ReaderPool(std::string path, int max_connections);
  ~ReaderPool();  // every lease must have been returned

  // An idle connection, a new one while fewer than the cap are open, else waits for a return.
  [[nodiscard]] absl::StatusOr<Lease> Acquire();

 private:
  void Return(std::unique_ptr<Connection> conn);

  const std::string path_;
  const int max_connections_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kiln::archive

#endif  // KILN_HARNESS_ARCHIVE_READER_POOL_H_
