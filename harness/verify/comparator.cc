#include "harness/verify/comparator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "harness/model/dtype.h"

namespace kiln {
namespace {

// flashinfer-bench's relative error: |x - y| / (|y| + 1e-8).
constexpr double kRelEpsilon = 1e-8;

struct Tally {
  Comparison c;
  int64_t unmatched_non_finite_ref = 0;  // reference NaN/Inf the candidate did not reproduce
};

bool SameNonFinite(double got, double expected) {
  if (std::isnan(expected)) return std::isnan(got);
  return got == expected;  // +-inf
}

void Visit(Tally& t, int64_t i, double got, double expected, const Tolerances& tol) {
  Comparison& c = t.c;
  if (!std::isfinite(expected)) {
    if (!SameNonFinite(got, expected)) {
      ++c.mismatched;
      ++t.unmatched_non_finite_ref;
    }
    return;
  }
  if (!std::isfinite(got)) {
    ++c.mismatched;
    ++c.non_finite;
    return;
  }
  const double abs_err = std::fabs(got - expected);
  const double rel_err = abs_err / (std::fabs(expected) + kRelEpsilon);
  if (abs_err > tol.atol && rel_err > tol.rtol) ++c.mismatched;
  if (rel_err > c.max_rel_error) c.max_rel_error = rel_err;
  if (abs_err > c.max_abs_error || c.worst_index < 0) {
    c.max_abs_error = abs_err;
    c.worst_index = i;
    c.worst_got = got;
    c.worst_expected = expected;
  }
}

// One loop per storage type so the per-element load is inlined rather than dispatched.
template <typename Load>
void VisitAll(Tally& t, int64_t numel, const Tolerances& tol, Load load) {
  for (int64_t i = 0; i < numel; ++i) Visit(t, i, load(0, i), load(1, i), tol);
}

template <typename T>
T Read(const void* base, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + i * static_cast<int64_t>(sizeof(T)), sizeof v);
  return v;
}

void VisitTyped(Tally& t, v1::DType dtype, const void* got, const void* expected, int64_t numel,
                const Tolerances& tol) {
  const void* bufs[2] = {got, expected};
  switch (dtype) {
    case v1::DTYPE_FLOAT32:
      return VisitAll(t, numel, tol, [&](int b, int64_t i) { return Read<float>(bufs[b], i); });
    case v1::DTYPE_FLOAT64:
      return VisitAll(t, numel, tol, [&](int b, int64_t i) { return Read<double>(bufs[b], i); });
    case v1::DTYPE_BFLOAT16:
      return VisitAll(t, numel, tol,
                      [&](int b, int64_t i) { return Bf16ToFloat(Read<uint16_t>(bufs[b], i)); });
    case v1::DTYPE_FLOAT16:
      return VisitAll(t, numel, tol,
                      [&](int b, int64_t i) { return F16ToFloat(Read<uint16_t>(bufs[b], i)); });
    default:
      return VisitAll(t, numel, tol,
                      [&](int b, int64_t i) { return LoadAsDouble(dtype, bufs[b], i); });
  }
}

std::string Summarize(const Tally& t, const Tolerances& tol) {
  const Comparison& c = t.c;
  std::string s = absl::StrFormat("%s: %d/%d elements off (atol %g, rtol %g, need %g%% matched)",
                                  c.passed ? "PASS" : "FAIL", c.mismatched, c.elements, tol.atol,
                                  tol.rtol, tol.required_matched_ratio * 100);
  if (c.non_finite > 0) {
    absl::StrAppendFormat(&s, ", %d NaN/Inf where the reference is finite", c.non_finite);
  }
  if (t.unmatched_non_finite_ref > 0) {
    absl::StrAppendFormat(&s, ", %d NaN/Inf of the reference not reproduced",
                          t.unmatched_non_finite_ref);
  }
  if (c.worst_index >= 0) {
    absl::StrAppendFormat(&s, ", max abs %.3g at [%d] (got %.6g, expected %.6g), max rel %.3g",
                          c.max_abs_error, c.worst_index, c.worst_got, c.worst_expected,
                          c.max_rel_error);
  }
  return s;
}

}  // namespace

Tolerances TolerancesFor(const v1::Definition& def) {
  Tolerances tol;
  if (def.has_tolerance()) {
    tol.atol = def.tolerance().atol();
    tol.rtol = def.tolerance().rtol();
    tol.required_matched_ratio = def.tolerance().required_matched_ratio();
  }
  return tol;
}

v1::Tolerance ToleranceProto(const v1::Definition& def) {
  const Tolerances tol = TolerancesFor(def);
  v1::Tolerance out;
  out.set_atol(tol.atol);
  out.set_rtol(tol.rtol);
  out.set_required_matched_ratio(tol.required_matched_ratio);
  return out;
}

namespace {

// Below this many elements a chunk is not worth a thread.
constexpr int64_t kMinChunkElements = int64_t{1} << 20;

// Compares [begin, end) into `t` (indices stay global).
void VisitRange(Tally& t, v1::DType dtype, const void* got, const void* expected, int64_t begin,
                int64_t end, const Tolerances& tol) {
  const int64_t bytes = DTypeStorageBytes(dtype, begin);
  // Sub-byte types are not chunked (their element boundaries are not byte boundaries).
  const auto* g = static_cast<const char*>(got) + bytes;
  const auto* e = static_cast<const char*>(expected) + bytes;
  Tally local;
  VisitTyped(local, dtype, g, e, end - begin, tol);
  t = local;
  if (t.c.worst_index >= 0) t.c.worst_index += begin;
}

// Folds chunk `b` (later elements) into `a`, as the serial loop would have.
void Merge(Tally& a, const Tally& b) {
  a.c.mismatched += b.c.mismatched;
  a.c.non_finite += b.c.non_finite;
  a.unmatched_non_finite_ref += b.unmatched_non_finite_ref;
  a.c.max_rel_error = std::max(a.c.max_rel_error, b.c.max_rel_error);
  if (b.c.worst_index >= 0 && (b.c.max_abs_error > a.c.max_abs_error || a.c.worst_index < 0)) {
    a.c.max_abs_error = b.c.max_abs_error;
    a.c.worst_index = b.c.worst_index;
    a.c.worst_got = b.c.worst_got;
    a.c.worst_expected = b.c.worst_expected;
  }
}

}  // namespace

Comparison CompareTensors(v1::DType dtype, const void* got, const void* expected, int64_t numel,
                          const Tolerances& tol, int threads) {
  Tally t;
  const int64_t elements = numel < 0 ? 0 : numel;
  if (threads <= 0) threads = static_cast<int>(std::min(16u, std::thread::hardware_concurrency()));
  const bool byte_aligned = DTypeStorageBytes(dtype, 2) == 2 * DTypeStorageBytes(dtype, 1);
  const int64_t chunks =
      byte_aligned ? std::min<int64_t>(threads, elements / kMinChunkElements) : 1;
  if (chunks <= 1) {
    VisitTyped(t, dtype, got, expected, elements, tol);
  } else {
    std::vector<Tally> parts(static_cast<size_t>(chunks));
    std::vector<std::thread> workers;
    const int64_t step = (elements + chunks - 1) / chunks;
    for (int64_t k = 1; k < chunks; ++k) {
      workers.emplace_back([&, k] {
        VisitRange(parts[k], dtype, got, expected, k * step, std::min(elements, (k + 1) * step),
                   tol);
      });
    }
    VisitRange(parts[0], dtype, got, expected, 0, std::min(elements, step), tol);
    for (std::thread& w : workers) w.join();
    t = parts[0];
    for (int64_t k = 1; k < chunks; ++k) Merge(t, parts[k]);
  }
  t.c.elements = elements;
  Comparison& c = t.c;
  const int64_t matched = c.elements - c.mismatched;
  // matched / elements >= required, computed as flashinfer-bench does.
  const bool ratio_ok =
      c.elements == 0 ||
      static_cast<double>(matched) / static_cast<double>(c.elements) >= tol.required_matched_ratio;
  c.passed = ratio_ok && c.non_finite == 0 && t.unmatched_non_finite_ref == 0;
  c.summary = Summarize(t, tol);
  return c;
}

}  // namespace kiln
