// The harness end of the worker pipes. RunWorker's calling thread waits for the process
// (Process::Wait enforces the wall-clock limit and cancellation by killing the process group);
// a second thread writes the request and reads events without ever blocking, so neither a
// worker that stops reading or writing mid-frame nor a descendant that keeps the pipe open can
// hang the harness. on_status runs on that second thread, one call at a time.
#include "harness/worker/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/sandbox/process.h"
#include "harness/worker/utf8.h"


namespace kiln {
namespace {

constexpr size_t kLogTailBytes = 4096;
constexpr uint32_t kMaxEventBytes = 64u << 20;
// How long events still in the pipe are drained after the worker has exited.
constexpr auto kDrainGrace = std::chrono::seconds(2);
constexpr int kPollMs = 10;

void PutLe32(uint32_t v, char out[4]) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint32_t GetLe32(const char in[4]) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

// Writes all of `data` to a blocking fd with SIGPIPE held back, so a vanished reader is an
// EPIPE error rather than the death of the writer.
bool WriteAll(int fd, const char* data, size_t size) {
  sigset_t pipe_set, old_set, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  bool ok = true;
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      if (errno == EPIPE && !was_pending) {
        timespec zero{};
        sigtimedwait(&pipe_set, nullptr, &zero);  // consume our own SIGPIPE
      }
      break;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return ok;
}

bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Close();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Close(); }
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// A close-on-exec pipe whose ends are numbered 10 or above, so that handing them to the child
// as fds 3 and 4 can never collide with their own numbers.
absl::Status MakePipe(Fd* read_end, Fd* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  for (int i = 0; i < 2; ++i) {
    int high = fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
    ::close(fds[i]);
    fds[i] = high;
  }
  if (fds[0] < 0 || fds[1] < 0) {
    if (fds[0] >= 0) ::close(fds[0]);
    if (fds[1] >= 0) ::close(fds[1]);
    return absl::InternalError(absl::StrCat("fcntl(F_DUPFD_CLOEXEC): ", std::strerror(errno)));
  }
  *read_end = Fd(fds[0]);
  *write_end = Fd(fds[1]);
  return absl::OkStatus();
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// The last `max_bytes` of the worker log, as valid UTF-8.
std::string LogTail(const std::string& path, size_t max_bytes) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0) return "(no worker log)";
  off_t size = st.st_size;
  off_t start = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
  std::string tail(static_cast<size_t>(size - start), '\0');
  ssize_t n = ::pread(fd.get(), tail.data(), tail.size(), start);
  tail.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (tail.empty()) return "(worker log is empty)";
  return SanitizeUtf8(tail);
}

}  // namespace

bool WriteFramed(int fd, const google::protobuf::MessageLite& msg) {
  std::string frame(4, '\0');
  size_t size = msg.ByteSizeLong();
  if (size > UINT32_MAX) return false;
  PutLe32(static_cast<uint32_t>(size), frame.data());
  if (!msg.AppendToString(&frame)) return false;
  return WriteAll(fd, frame.data(), frame.size());
}

bool ReadFramed(int fd, google::protobuf::MessageLite* msg, uint32_t max_bytes) {
  char header[4];
  if (!ReadAll(fd, header, sizeof header)) return false;
  uint32_t size = GetLe32(header);
  if (size > max_bytes) return false;
  std::string body(size, '\0');
  if (!ReadAll(fd, body.data(), body.size())) return false;
  return msg->ParseFromString(body);
}

std::vector<std::string> OverrideEnvironment(const std::vector<std::string>& base,
                                             const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  auto name_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  for (const std::string& kv : base) {
    bool replaced = false;
    for (const std::string& o : overrides) replaced = replaced || name_of(o) == name_of(kv);
    if (!replaced) out.push_back(kv);
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  return out;
}

std::string WorkerOutputPath(const std::string& output_dir, int trial, const std::string& name) {
  return absl::StrCat(output_dir.empty() ? "." : output_dir, "/t", trial, "_", name, ".bin");
}

absl::Status CheckResultClaims(const v1::WorkerRequest& request, const v1::WorkerResult& result) {
  const v1::Definition& def = request.definition();
  if (!request.measure() && result.trials_size() != request.trial_seeds_size()) {
    return absl::InvalidArgumentError(absl::StrCat("worker result: ", result.trials_size(),
                                                   " trials for ", request.trial_seeds_size(),
                                                   " trial seeds"));
  }
  if (request.measure() && (result.trials_size() == 0 || !result.has_timing() ||
                            result.timing().trials() != result.trials_size())) {
    return absl::InvalidArgumentError(absl::StrCat("worker result: ", result.trials_size(),
                                                   " trials measured, timing claims ",
                                                   result.timing().trials()));
  }
  for (int t = 0; t < result.trials_size(); ++t) {
    const v1::TrialOutputs& trial = result.trials(t);
    std::string where = absl::StrCat("worker result: trials[", t, "]");
    if (trial.trial() != t) {
      return absl::InvalidArgumentError(absl::StrCat(where, ".trial is ", trial.trial()));
    }
    if (trial.outputs_size() != def.outputs_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has ", trial.outputs_size(), " outputs, the definition ", def.outputs_size()));
    }
    for (int o = 0; o < def.outputs_size(); ++o) {
      const v1::OutputTensor& out = trial.outputs(o);
      const v1::TensorSpec& spec = def.outputs(o);
      std::string expected = WorkerOutputPath(request.output_dir(), t, spec.name());
      if (out.name() != spec.name() || out.dtype() != spec.dtype() || out.path() != expected) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ".outputs[", o, "]: expected '", spec.name(), "' at ", expected));
      }
    }
  }
  return absl::OkStatus();
}

namespace {

// Both pipes of one worker, pumped without blocking on a thread of its own: the request goes
// out, events come in and are parsed frame by frame. Kills the worker (through `kill`, which
// Process::Wait polls) when the caller cancels or the worker sends garbage.
class WorkerChannel {
 public:
  WorkerChannel(Fd request_fd, Fd event_fd, std::string request_frame,
                const std::function<void(const v1::WorkerStatus&)>& on_status,
                const std::atomic<bool>* cancel, std::string log_path, int64_t max_log_bytes)
      : log_path_(std::move(log_path)),
        max_log_bytes_(max_log_bytes),
        request_fd_(std::move(request_fd)),
        event_fd_(std::move(event_fd)),
        request_(std::move(request_frame)),
        on_status_(on_status),
        cancel_(cancel) {
    SetNonBlocking(request_fd_.get());
    SetNonBlocking(event_fd_.get());
  }

  // Runs on the channel thread until the events end, or until `process_done` has been set and
  // the drain grace has passed.
  void Pump();

  std::atomic<bool> kill{false};
  std::atomic<bool> process_done{false};

  // Valid once Pump has returned.
  std::optional<v1::WorkerResult> result;
  std::optional<v1::WorkerStatus> last_status;
  bool malformed = false;
  bool cancelled = false;
  bool log_flooded = false;  // killed for writing more than max_log_bytes of log

 private:
  void WriteRequest();
  // Kills the worker once its log is over the limit.
  void WatchLog();
  const std::string log_path_;
  const int64_t max_log_bytes_;
  void ReadEvents();
  void ParseFrames();

  Fd request_fd_;
  Fd event_fd_;
  std::string request_;
  size_t request_sent_ = 0;
  std::string buffer_;
  const std::function<void(const v1::WorkerStatus&)>& on_status_;
  const std::atomic<bool>* cancel_;
};

void WorkerChannel::Pump() {
  // A write to a worker that has died raises SIGPIPE on this thread; keep it pending here (it
  // is discarded with the thread) and see EPIPE instead.
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
  std::optional<std::chrono::steady_clock::time_point> drain_deadline;
  while (true) {
    if (cancel_ != nullptr && cancel_->load() && !cancelled) {
      cancelled = true;
      kill = true;
    }
    WatchLog();
    if (process_done.load()) {
      if (event_fd_.get() < 0) break;
      auto now = std::chrono::steady_clock::now();
      if (!drain_deadline) drain_deadline = now + kDrainGrace;
      if (now >= *drain_deadline) break;
    } else if (event_fd_.get() < 0) {
      // Events are over but the worker still runs: keep forwarding cancellation.
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
      continue;
    }
    pollfd fds[2];
    int n = 0;
    fds[n++] = {event_fd_.get(), POLLIN, 0};
    if (request_fd_.get() >= 0) fds[n++] = {request_fd_.get(), POLLOUT, 0};
    int ready = ::poll(fds, static_cast<nfds_t>(n), kPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (n > 1 && fds[1].revents != 0) WriteRequest();
    if (fds[0].revents != 0) ReadEvents();
  }
}

void WorkerChannel::WatchLog() {
  if (max_log_bytes_ <= 0 || log_flooded || log_path_.empty()) return;
  struct stat st;
  if (::stat(log_path_.c_str(), &st) != 0 || st.st_size <= max_log_bytes_) return;
  log_flooded = true;
  kill = true;
}

void WorkerChannel::WriteRequest() {
  while (request_sent_ < request_.size()) {
    ssize_t n = ::write(request_fd_.get(), request_.data() + request_sent_,
                        request_.size() - request_sent_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) break;  // the worker is gone; its exit tells the story
    request_sent_ += static_cast<size_t>(n);
  }
  request_fd_.Close();  // end of request
}

void WorkerChannel::ReadEvents() {
  char chunk[1 << 16];
  // Bounded, so that a worker flooding the pipe cannot keep cancellation from being seen.
  for (int reads = 0; reads < 64 && event_fd_.get() >= 0; ++reads) {
    ssize_t n = ::read(event_fd_.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      event_fd_.Close();  // EOF: a partial frame left in buffer_ means the worker died mid-write
      return;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
    ParseFrames();
  }
}

void WorkerChannel::ParseFrames() {
  size_t offset = 0;
  while (!malformed && buffer_.size() - offset >= 4) {
    uint32_t size = GetLe32(buffer_.data() + offset);
    v1::WorkerEvent event;
    if (size > kMaxEventBytes) {
      malformed = true;
      break;
    }
    if (buffer_.size() - offset - 4 < size) break;
    if (!event.ParseFromArray(buffer_.data() + offset + 4, static_cast<int>(size))) {
      malformed = true;
      break;
    }
    offset += 4 + size;
    if (result) {
      // An honest worker sends nothing after its one result.
      malformed = true;
      break;
    }
    if (event.has_status()) {
      last_status = event.status();
      if (on_status_) on_status_(event.status());
    } else if (event.has_result()) {
      result = std::move(*event.mutable_result());
    }
  }
  buffer_.erase(0, offset);
  if (malformed) {
    kill = true;
    event_fd_.Close();
  }
}

std::string StageText(const std::optional<v1::WorkerStatus>& status) {
  if (!status) return "startup";
  return absl::StrCat(status->stage(), ", trial ", status->trial());
}

v1::WorkerResult Failure(v1::EvaluationStatus status, const std::string& error) {
  v1::WorkerResult result;
  result.set_status(status);
  result.set_error(SanitizeUtf8(error));
  return result;
}

std::string WithLogTail(const std::string& error, const WorkerLaunch& launch) {
  return absl::StrCat(error, "\nworker log (last 4 KiB):\n",
                      LogTail(launch.log_path, kLogTailBytes));
}

v1::WorkerResult Interpret(const WorkerLaunch& launch, const v1::WorkerRequest& request,
                           const ProcessResult& process, WorkerChannel& channel) {
  if (channel.malformed) {
    return Failure(v1::RUNTIME_ERROR, WithLogTail("worker sent a malformed message", launch));
  }
  bool clean_exit = !process.timed_out && !process.cancelled && process.term_signal == 0 &&
                    process.exit_code == 0;
  if (channel.result && clean_exit) {
    if (channel.result->status() == v1::PASSED) {
      absl::Status claims = CheckResultClaims(request, *channel.result);
      if (!claims.ok()) return Failure(v1::REJECTED, std::string(claims.message()));
    }
    // A solution that returned non-zero usually printed why (the TVM-FFI entries print the
    // failed check); the verdict's log carries it.
    if (channel.result->status() == v1::RUNTIME_ERROR &&
        absl::StartsWith(channel.result->error(), "entry point returned ")) {
      channel.result->set_error(WithLogTail(channel.result->error(), launch));
    }
    return *std::move(channel.result);
  }
  if (channel.cancelled) return Failure(v1::CANCELLED, "cancelled");
  // A verdict against the solution that the worker sent before it ended uncleanly stands: a
  // thread the solution left behind can crash the process on its way out, which makes the
  // verdict no better. (A PASSED result needs a clean exit.)
  if (channel.result && channel.result->status() != v1::PASSED && !process.timed_out &&
      !process.cancelled && !channel.log_flooded) {
    channel.result->set_error(absl::StrCat(channel.result->error(), " (sent before the worker ",
                                           process.term_signal != 0 ? "was " : "ended with ",
                                           process.Describe(), ")"));
    return *std::move(channel.result);
  }
  if (channel.log_flooded) {
    return Failure(v1::RUNTIME_ERROR,
                   WithLogTail(absl::StrFormat("the worker's output passed %d MiB and it was "
                                               "killed (stage: %s); print less",
                                               launch.max_log_bytes >> 20,
                                               StageText(channel.last_status)),
                               launch));
  }
  if (process.timed_out) {
    return Failure(v1::TIMEOUT, absl::StrFormat("timed out after %g s (stage: %s)",
                                                launch.timeout_s, StageText(channel.last_status)));
  }
  std::string what;
  if (process.term_signal != 0) {
    what = absl::StrCat("worker ", process.Describe());
  } else if (process.exit_code == 0) {
    what = "worker exited (exit code 0) without sending a result";
  } else {
    what = absl::StrCat("worker ended with ", process.Describe());
  }
  return Failure(
      v1::RUNTIME_ERROR,
      WithLogTail(absl::StrCat(what, " during ", StageText(channel.last_status)), launch));
}

}  // namespace

absl::StatusOr<v1::WorkerResult> RunWorker(
    const WorkerLaunch& launch, const v1::WorkerRequest& request,
    const std::function<void(const v1::WorkerStatus&)>& on_status,
    const std::atomic<bool>* cancel) {
  std::string frame(4, '\0');
  if (!request.AppendToString(&frame) || frame.size() - 4 > UINT32_MAX) {
    return absl::InvalidArgumentError("the worker request cannot be serialized");
  }
  PutLe32(static_cast<uint32_t>(frame.size() - 4), frame.data());

  Fd request_read, request_write, event_read, event_write;
  absl::Status s = MakePipe(&request_read, &request_write);
  if (s.ok()) s = MakePipe(&event_read, &event_write);
  if (!s.ok()) return s;

  ProcessOptions opts;
  opts.argv = {launch.worker_path};
  opts.argv.insert(opts.argv.end(), launch.worker_args.begin(), launch.worker_args.end());
  opts.cwd = launch.job_dir;
  opts.stdout_path = launch.log_path;
  opts.merge_stderr = true;
  opts.timeout_s = launch.timeout_s;
  opts.max_address_space = launch.max_address_space;
  opts.child_fds = {request_read.get(), event_write.get()};
  opts.sandbox = launch.sandbox;
  if (!launch.env_overrides.empty()) {
    opts.env = OverrideEnvironment(ParentEnvironment(), launch.env_overrides);
  }
  absl::StatusOr<Process> process = Process::Start(opts);
  // The child holds its own copies; ours would keep the request open and the events from ending.
  request_read.Close();
  event_write.Close();
  if (!process.ok()) return process.status();

  WorkerChannel channel(std::move(request_write), std::move(event_read), std::move(frame),
                        on_status, cancel, launch.log_path, launch.max_log_bytes);
  std::thread pump([&channel] { channel.Pump(); });
  ProcessResult result = process->Wait(&channel.kill);
  channel.process_done = true;
  pump.join();
  return Interpret(launch, request, result, channel);
}

}  // namespace kiln
