#include "harness/archive/reader_pool.h"

#include <utility>

namespace kiln::archive {

ReaderPool::Lease::Lease(ReaderPool* pool, std::unique_ptr<Connection> conn)
    : pool_(pool), conn_(std::move(conn)) {}

ReaderPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), conn_(std::move(other.conn_)) {}

ReaderPool::Lease::~Lease() {
  if (conn_ != nullptr) pool_->Return(std::move(conn_));
}

ReaderPool::ReaderPool(std::string path, int max_connections)
    : path_(std::move(path)), max_connections_(max_connections) {}

ReaderPool::~ReaderPool() = default;

absl::StatusOr<ReaderPool::Lease> ReaderPool::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    auto can_proceed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !idle_.empty() || open_ < max_connections_;
    };
    mu_.Await(absl::Condition(&can_proceed));
    if (!idle_.empty()) {
      std::unique_ptr<Connection> conn = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(conn));
    }
    ++open_;  // reserve the slot; the open itself happens outside the lock
  }
  absl::StatusOr<std::unique_ptr<Connection>> conn = Connection::Open(path_, SQLITE_OPEN_READONLY);
  if (!conn.ok()) {
    absl::MutexLock lock(&mu_);
    --open_;
    return conn.status();
  }
  return Lease(this, std::move(*conn));
}

void ReaderPool::Return(std::unique_ptr<Connection> conn) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(conn));
}

}  // namespace kiln::archive
