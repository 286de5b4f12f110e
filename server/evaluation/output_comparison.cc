#include "server/evaluation/output_comparison.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/common/sha256.h"
#include "harness/model/dtype.h"
#include "harness/model/validate.h"
#include "harness/verify/comparator.h"
#include "harness/verify/degenerate_output.h"
#include "harness/verify/integrity.h"
#include "harness/verify/integrity_policy.h"

namespace kiln {

// Buffers for the candidate's output bytes, kept for the next pass of the same comparison: a
// fresh buffer of hundreds of MiB costs a page fault per 4 KiB before the first byte is read.
class BufferPool {
 public:
  std::unique_ptr<char[]> Take(size_t size) {
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->first != size) continue;
      std::unique_ptr<char[]> buffer = std::move(it->second);
      kept_.erase(it);
      return buffer;
    }
    return std::unique_ptr<char[]>(new char[size == 0 ? 1 : size]);  // not zero-filled
  }
  void Give(std::unique_ptr<char[]> buffer, size_t size) {
    if (kept_.size() >= kMaxKept) kept_.erase(kept_.begin());
    kept_.emplace_back(size, std::move(buffer));
  }

 private:
  static constexpr size_t kMaxKept = 2;
  std::vector<std::pair<size_t, std::unique_ptr<char[]>>> kept_;
};

namespace {

// An output file's bytes. A candidate's are read once into memory of its own: a worker that is
// still running (a candidate serving its run's next workload) cannot change what is being
// compared, nor cut the file short under a mapping. The reference's (kiln's own worker, which
// never touches a file it has answered for) are mapped read-only, without a copy.
class OutputBytes {
 public:
  OutputBytes(BufferPool* pool, size_t size)
      : pool_(pool), owned_(pool->Take(size)), size_(size) {}
  OutputBytes(void* mapped, size_t size) : mapped_(mapped), size_(size) {}
  OutputBytes(OutputBytes&& o) noexcept
      : pool_(std::exchange(o.pool_, nullptr)),
        owned_(std::move(o.owned_)),
        mapped_(std::exchange(o.mapped_, nullptr)),
        size_(o.size_) {}
  OutputBytes& operator=(OutputBytes&&) = delete;
  ~OutputBytes() {
    if (mapped_ != nullptr) ::munmap(mapped_, size_);
    if (pool_ != nullptr && owned_ != nullptr) pool_->Give(std::move(owned_), size_);
  }
  char* buffer() { return owned_.get(); }  // an owned copy's, to read the file into
  const char* data() const {
    return mapped_ != nullptr ? static_cast<const char*>(mapped_) : owned_.get();
  }
  size_t size() const { return size_; }

 private:
  BufferPool* pool_ = nullptr;
  std::unique_ptr<char[]> owned_;
  void* mapped_ = nullptr;
  size_t size_;
};

// Reads `size` bytes at offset 0 of `fd` into `dst`; false on a read error or a short file.
// Large files are read by several threads in parallel: the page-cache copy is what a verdict
// waits for at large workloads (RMSNorm at batch 14418 has 6 output files of 118 MiB).
bool ReadAll(int fd, char* dst, size_t size) {
  constexpr size_t kPerThread = size_t{16} << 20;
  constexpr size_t kMaxThreads = 8;
  const size_t threads = std::min<size_t>(
      {kMaxThreads, std::max<size_t>(1, std::thread::hardware_concurrency()),
       std::max<size_t>(1, size / kPerThread)});
  std::atomic<bool> ok{true};
  auto part = [&](size_t begin, size_t end) {
    while (begin < end) {
      const ssize_t n = ::pread(fd, dst + begin, end - begin, static_cast<off_t>(begin));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ok = false;
        return;
      }
      begin += static_cast<size_t>(n);
    }
  };
  const size_t chunk = (size + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) {
    workers.emplace_back(part, std::min(size, t * chunk), std::min(size, (t + 1) * chunk));
  }
  part(0, std::min(size, chunk));
  for (std::thread& w : workers) w.join();
  return ok;
}

// Errors: PERMISSION_DENIED for a file outside `dir`, a link or a non-regular file;
// OUT_OF_RANGE for a size other than `expected_bytes`; anything else for an unreadable file.
absl::StatusOr<OutputBytes> ReadOutputFile(const std::string& claimed, const std::string& dir,
                                           int64_t expected_bytes, bool trusted,
                                           BufferPool* pool) {
  const std::string path =
      absl::StartsWith(claimed, "/") ? claimed : absl::StrCat(dir, "/", claimed);
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) {
    return absl::NotFoundError(absl::StrCat("no such file: ", claimed));
  }
  if (!absl::StartsWith(resolved, absl::StrCat(dir, "/"))) {
    return absl::PermissionDeniedError(absl::StrCat("'", claimed, "' is outside the job folder"));
  }
  int fd = ::open(resolved, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open ", claimed));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd);
    return absl::PermissionDeniedError(absl::StrCat("'", claimed, "' is not a plain file"));
  }
  if (st.st_size != expected_bytes) {
    ::close(fd);
    return absl::OutOfRangeError(absl::StrCat(st.st_size, " bytes, expected ", expected_bytes));
  }
  if (trusted && expected_bytes > 0) {
    void* mapped = ::mmap(nullptr, static_cast<size_t>(expected_bytes), PROT_READ,
                          MAP_PRIVATE | MAP_POPULATE, fd, 0);
    ::close(fd);
    if (mapped == MAP_FAILED) return absl::DataLossError(absl::StrCat("cannot map ", claimed));
    return OutputBytes(mapped, static_cast<size_t>(expected_bytes));
  }
  OutputBytes content(pool, static_cast<size_t>(expected_bytes));
  const bool read = ReadAll(fd, content.buffer(), content.size());
  ::close(fd);
  if (!read) return absl::DataLossError(absl::StrCat("short read of ", claimed));
  return content;
}

// integrity.degenerate_definition is a property of the definition's reference, not of a run:
// it is looked for once per (definition, workload, output) while the harness runs.
class DegenerateChecks {
 public:
  // The finding for `key`, computing it with `check` the first time.
  std::string Get(const std::string& key, const std::function<std::string()>& check) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = seen_.find(key);
      if (it != seen_.end()) return it->second;
    }
    std::string finding = check();
    std::lock_guard<std::mutex> lock(mu_);
    if (seen_.size() >= kMaxEntries) seen_.clear();
    seen_.emplace(key, finding);
    return finding;
  }

 private:
  static constexpr size_t kMaxEntries = 1 << 14;
  std::mutex mu_;
  std::map<std::string, std::string> seen_;
};

DegenerateChecks& Degenerate() {
  static auto* checks = new DegenerateChecks();
  return *checks;
}

const v1::OutputTensor* FindOutput(const v1::WorkerResult& result, int trial,
                                   const std::string& name, bool recheck) {
  for (const v1::TrialOutputs& t : recheck ? result.rechecks() : result.trials()) {
    if (t.trial() != trial) continue;
    for (const v1::OutputTensor& o : t.outputs()) {
      if (o.name() == name) return &o;
    }
  }
  return nullptr;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Sets the verdict's failure once: the first failure is the one reported.
void Fail(OutputVerdict& v, v1::EvaluationStatus status, const std::string& where,
          const std::string& what) {
  if (v.status != v1::PASSED) return;
  v.status = status;
  v.reason = absl::StrCat(where, ": ", what);
}

void FailReference(OutputVerdict& v, const std::string& where, const std::string& what) {
  if (v.status != v1::PASSED) return;
  v.reference_failed = true;
  v.status = v1::RUNTIME_ERROR;
  v.reason = absl::StrCat("reference failed: ", where, ": ", what);
}

// "[3, 17]" for flat element `index` of `shape`.
std::string IndexText(int64_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> coords(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = shape[d] > 0 ? index % shape[d] : 0;
    index = shape[d] > 0 ? index / shape[d] : 0;
  }
  return shape.empty() ? "[]" : ShapeText(coords);
}

// What is on trial: the checked call of a trial or its recheck.
struct Pass {
  int trial;
  bool recheck;
  std::string Where(const std::string& output) const {
    return absl::StrCat("output '", output, "' ", recheck ? "recheck of trial " : "trial ", trial);
  }
};

// Turns a numerical failure into the integrity finding it stands for, if any.
void JudgeMismatch(const v1::TensorSpec& spec, const std::vector<int64_t>& shape, const Pass& pass,
                   const OutputBytes& got, const OutputBytes& expected, const Comparison& cmp,
                   OutputVerdict& v) {
  const std::string where = pass.Where(spec.name());
  const int64_t unwritten =
      FirstPoisonedElement(spec.dtype(), got.data(), expected.data(), NumElements(shape));
  std::string what = cmp.summary;
  if (unwritten >= 0) {
    what = absl::StrCat("element ", IndexText(unwritten, shape), " (flat index ", unwritten,
                        ") was never written: it still holds kiln's poison");
  }
  if (pass.recheck) {
    Fail(v, v1::REJECTED, integrity::kOutputCaching,
         absl::StrCat(where, ": ", what,
                      "; the same input buffers with new values at a few positions gave stale "
                      "outputs, so the solution replays earlier results"));
  } else if (unwritten >= 0) {
    Fail(v, v1::REJECTED, integrity::kUnwrittenOutput, absl::StrCat(where, ": ", what));
  } else {
    Fail(v, v1::INCORRECT_NUMERICAL, where, what);
  }
}

v1::EvaluationStatus StatusForReadError(const absl::Status& s) {
  if (absl::IsOutOfRange(s)) return v1::INCORRECT_SHAPE;
  if (absl::IsPermissionDenied(s)) return v1::REJECTED;
  return v1::RUNTIME_ERROR;
}

// A later trial's checked output that failed: the earlier trial (newest first) whose expected
// output it matches within tolerance, or -1. Trials draw new inputs, so matching an earlier
// trial's answer is a replay (an output cache keyed on anything but the values).
int EarlierTrialReplayed(const v1::TensorSpec& spec, const Pass& pass,
                         const WorkerOutputs& reference, const OutputBytes& actual, int64_t bytes,
                         int64_t numel, const Tolerances& tol, BufferPool* pool) {
  for (int j = pass.trial - 1; j >= 0; --j) {
    const v1::OutputTensor* ref = FindOutput(*reference.result, j, spec.name(), false);
    if (ref == nullptr) continue;
    auto earlier = ReadOutputFile(ref->path(), reference.dir, bytes, /*trusted=*/true, pool);
    if (!earlier.ok()) continue;
    if (CompareTensors(spec.dtype(), actual.data(), earlier->data(), numel, tol, /*threads=*/0)
            .passed) {
      return j;
    }
  }
  return -1;
}

// Compares one output of one trial; returns false when the comparison cannot go on.
bool CompareOne(const v1::Definition& def, const v1::Workload& workload, const v1::TensorSpec& spec,
                const Pass& pass, const WorkerOutputs& reference, const WorkerOutputs& candidate,
                const Tolerances& tol, BufferPool* pool, OutputVerdict& v) {
  const std::string where = pass.Where(spec.name());
  auto shape = ResolveShape(def, spec, workload);
  if (!shape.ok()) {
    Fail(v, v1::RUNTIME_ERROR, where, std::string(shape.status().message()));
    return false;
  }
  const int64_t numel = NumElements(*shape);
  const int64_t bytes = DTypeStorageBytes(spec.dtype(), numel);
  const v1::OutputTensor* ref = FindOutput(*reference.result, pass.trial, spec.name(), pass.recheck);
  if (ref == nullptr) {
    FailReference(v, where, "not written");
    return false;
  }
  const v1::OutputTensor* got = FindOutput(*candidate.result, pass.trial, spec.name(), pass.recheck);
  if (got == nullptr) {
    Fail(v, pass.recheck ? v1::REJECTED : v1::RUNTIME_ERROR,
         pass.recheck ? integrity::kOutputCaching : where,
         pass.recheck ? absl::StrCat(where, ": not written by the candidate's worker")
                      : "not written by the candidate's worker");
    return false;
  }
  if (got->dtype() != spec.dtype()) {
    Fail(v, v1::INCORRECT_DTYPE, where,
         absl::StrCat("dtype ", std::string(DTypeName(got->dtype())), ", expected ",
                      std::string(DTypeName(spec.dtype()))));
    return false;
  }
  std::vector<int64_t> got_shape(got->shape().begin(), got->shape().end());
  if (got_shape != *shape) {
    Fail(v, v1::INCORRECT_SHAPE, where,
         absl::StrCat("shape ", ShapeText(got_shape), ", expected ", ShapeText(*shape)));
    return false;
  }
  // The candidate's file first: one hard-linked to the reference's shows on both.
  auto actual = ReadOutputFile(got->path(), candidate.dir, bytes, /*trusted=*/false, pool);
  if (!actual.ok()) {
    const v1::EvaluationStatus status = StatusForReadError(actual.status());
    Fail(v, status, status == v1::REJECTED ? integrity::kOutputFile : where,
         status == v1::REJECTED ? absl::StrCat(where, ": ", actual.status().message())
                                : std::string(actual.status().message()));
    return false;
  }
  auto expected = ReadOutputFile(ref->path(), reference.dir, bytes, /*trusted=*/true, pool);
  if (!expected.ok()) {
    FailReference(v, where, std::string(expected.status().message()));
    return false;
  }
  Comparison cmp =
      CompareTensors(spec.dtype(), actual->data(), expected->data(), numel, tol, /*threads=*/0);
  v.compared = true;
  v.checked += cmp.elements;
  v.mismatched += cmp.mismatched;
  if (cmp.max_abs_error > v.max_abs_error || v.worst_output.empty()) {
    v.worst_output = spec.name();
  }
  // A NaN or Inf where the reference is finite is an unbounded error, not "0 over the finite
  // pairs": an unwritten (poisoned) output must not read as a perfect one.
  const double inf = std::numeric_limits<double>::infinity();
  v.max_abs_error = std::max(v.max_abs_error, cmp.non_finite > 0 ? inf : cmp.max_abs_error);
  v.max_rel_error = std::max(v.max_rel_error, cmp.non_finite > 0 ? inf : cmp.max_rel_error);
  if (!cmp.passed) {
    const int replayed = pass.recheck ? -1
                                      : EarlierTrialReplayed(spec, pass, reference, *actual, bytes,
                                                             numel, tol, pool);
    if (replayed >= 0) {
      Fail(v, v1::REJECTED, integrity::kOutputCaching,
           absl::StrCat(where, ": ", cmp.summary, "; it is trial ", replayed,
                        "'s expected output (within tolerance) although trial ", pass.trial,
                        " has new inputs, so the solution replays an earlier result"));
    } else {
      JudgeMismatch(spec, *shape, pass, *actual, *expected, cmp, v);
    }
  }
  if (pass.trial == 0 && !pass.recheck) {
    const std::string key =
        absl::StrCat(Sha256Hex(def.SerializeAsString()), "|", workload.uuid(), "|", spec.name(),
                     "|", absl::StrJoin(*shape, ","));
    const std::string trivial = Degenerate().Get(key, [&] {
      return TrivialOutputThatPasses(spec.dtype(), expected->data(), numel, tol, /*threads=*/0);
    });
    if (!trivial.empty()) {
      v.warnings.push_back(integrity::Reason(
          integrity::kDegenerateDefinition,
          absl::StrCat("an ", trivial, " output passes output '", spec.name(),
                       "' at the definition's tolerances (atol ", tol.atol, ", rtol ", tol.rtol,
                       "): a PASSED verdict on this definition does not prove the function was "
                       "computed")));
    }
  }
  return true;
}

}  // namespace

OutputComparison::OutputComparison(const v1::Definition& def, const v1::Workload& workload,
                                   const WorkerOutputs& reference)
    : def_(def),
      workload_(workload),
      reference_(reference),
      tol_(TolerancesFor(def)),
      pool_(new BufferPool) {}

OutputComparison::~OutputComparison() = default;

bool OutputComparison::Compare(int trial, bool recheck, const WorkerOutputs& candidate) {
  if (stopped_) return false;
  for (const v1::TensorSpec& spec : def_.outputs()) {
    if (!CompareOne(def_, workload_, spec, {trial, recheck}, reference_, candidate, tol_,
                    pool_.get(), verdict_)) {
      stopped_ = true;
      return false;
    }
    ++pairs_;
  }
  return true;
}

OutputVerdict OutputComparison::Finish() {
  // The reason names the first failing comparison; the trace's error figures cover them all.
  // Where they differ the reason says both, so that no reader sees two "max abs" that disagree.
  if (!stopped_ && verdict_.status == v1::INCORRECT_NUMERICAL && pairs_ > 1) {
    absl::StrAppendFormat(&verdict_.reason,
                          "; over every trial and output compared: max abs %.3g, max rel %.3g "
                          "(the trace's correctness figures)",
                          verdict_.max_abs_error, verdict_.max_rel_error);
  }
  stopped_ = true;
  return std::move(verdict_);
}

OutputVerdict CompareOutputs(const v1::Definition& def, const v1::Workload& workload, int trials,
                             const WorkerOutputs& reference, const WorkerOutputs& candidate) {
  OutputComparison comparison(def, workload, reference);
  for (bool recheck : {false, true}) {
    // Workers of this build always recheck; results without rechecks come from tests.
    if (recheck && reference.result->rechecks().empty()) break;
    for (int trial = 0; trial < trials; ++trial) {
      if (!comparison.Compare(trial, recheck, candidate)) return comparison.Finish();
    }
  }
  return comparison.Finish();
}

}  // namespace kiln
