// The captured output of a child process: kept up to a byte limit, the rest read and dropped
// (so that the child never blocks on a full pipe) and counted in a closing note.
#ifndef KILN_HARNESS_SANDBOX_OUTPUT_CAPTURE_H_
#define KILN_HARNESS_SANDBOX_OUTPUT_CAPTURE_H_

#include <cstdint>
#include <string>

namespace kiln {

class OutputCapture {
 public:
  explicit OutputCapture(int64_t max_bytes) : max_bytes_(max_bytes < 0 ? 0 : max_bytes) {}

  // One read() from `fd`. Returns false at EOF or on a read error other than EINTR/EAGAIN.
  bool ReadOnce(int fd);
  // Reads what `fd` holds right now without blocking (switches it to O_NONBLOCK).
  void Drain(int fd);
  // The kept bytes, followed by "[kiln: N more bytes of output dropped]" when any were.
  std::string Finish();

 private:
  void Append(const char* data, size_t n);

  int64_t max_bytes_;
  int64_t dropped_ = 0;
  std::string text_;
};

}  // namespace kiln

#endif  // KILN_HARNESS_SANDBOX_OUTPUT_CAPTURE_H_
