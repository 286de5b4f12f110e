#include "client/mcp/mcp_ledger.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln::cli {
namespace {

constexpr char kPending[] = "pending ";

absl::Status FileError(const std::string& what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat("--ledger ", path, ": ", what, ": ", std::strerror(errno)));
}

// The file's lines (empty ones dropped), read from `fd` at offset 0.
absl::StatusOr<std::vector<std::string>> ReadLines(int fd, const std::string& path) {
  std::string text;
  char buffer[4096];
  off_t offset = 0;
  for (;;) {
    const ssize_t n = pread(fd, buffer, sizeof buffer, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return FileError("read", path);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    offset += n;
  }
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    lines.emplace_back(line);
  }
  return lines;
}

absl::Status WriteLines(int fd, const std::string& path, const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) absl::StrAppend(&text, line, "\n");
  if (ftruncate(fd, 0) != 0) return FileError("truncate", path);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return FileError("write", path);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

EvaluationLedger::EvaluationLedger(std::string path, int max_evaluations)
    : path_(std::move(path)), max_evaluations_(max_evaluations) {}

template <typename Change>
absl::Status EvaluationLedger::Update(Change change) {
  std::lock_guard<std::mutex> lock(mu_);
  if (path_.empty()) {
    change(lines_);
    return absl::OkStatus();
  }
  const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return FileError("open", path_);
  // Closing the descriptor releases the lock, on every path out.
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) return FileError("lock", path_);
  }
  absl::StatusOr<std::vector<std::string>> lines = ReadLines(fd, path_);
  if (!lines.ok()) return lines.status();
  if (!change(*lines)) return absl::OkStatus();
  return WriteLines(fd, path_, *lines);
}

absl::StatusOr<std::optional<std::string>> EvaluationLedger::Reserve() {
  std::optional<std::string> ticket;
  absl::Status status = Update([&](std::vector<std::string>& lines) {
    if (max_evaluations_ >= 0 && static_cast<int>(lines.size()) >= max_evaluations_) return false;
    // Unique among the processes sharing the ledger (a process id is not reused while it
    // lives) and among the ledgers of this process.
    static std::atomic<int64_t> next_ticket{0};
    ticket = absl::StrCat(getpid(), "-", next_ticket.fetch_add(1));
    lines.push_back(absl::StrCat(kPending, *ticket));
    return true;
  });
  if (!status.ok()) return status;
  return ticket;
}

absl::Status EvaluationLedger::Admit(const std::string& ticket, const std::string& run_id) {
  return Update([&](std::vector<std::string>& lines) {
    auto it = std::find(lines.begin(), lines.end(), absl::StrCat(kPending, ticket));
    if (it == lines.end()) {
      lines.push_back(run_id);  // the line was lost (the file edited meanwhile): count the run
    } else {
      *it = run_id;
    }
    return true;
  });
}

absl::Status EvaluationLedger::Release(const std::string& ticket) {
  return Update([&](std::vector<std::string>& lines) {
    auto it = std::find(lines.begin(), lines.end(), absl::StrCat(kPending, ticket));
    if (it == lines.end()) return false;
    lines.erase(it);
    return true;
  });
}

}  // namespace kiln::cli
