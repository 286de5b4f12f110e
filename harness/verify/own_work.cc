#include "harness/verify/own_work.h"

#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/model/definition_settings.h"
#include "harness/verify/integrity_policy.h"

namespace kiln::integrity {

namespace {

constexpr std::string_view kKernel = "kernel ";

bool IsKernel(const std::string& signature) {
  return signature.compare(0, kKernel.size(), kKernel) == 0;
}

}  // namespace

std::string ShareText(double share) { return absl::StrFormat("%.1f %%", 100 * share); }

std::string OwnWorkText(const v1::OwnWork& own) {
  if (!own.measured()) return own.not_measured();
  return absl::StrFormat("%s (%.6g of %.6g ms per call%s%s)", ShareText(own.share()),
                         own.own_ms(), own.total_ms(), own.own_kernels().empty() ? "" : "; ",
                         absl::StrJoin(own.own_kernels(), ", "));
}

std::optional<double> MeanShare(const std::vector<const v1::OwnWork*>& works) {
  double sum = 0;
  int n = 0;
  for (const v1::OwnWork* own : works) {
    if (own == nullptr || !own->measured()) continue;
    sum += own->share();
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

v1::OwnWork OwnWorkOf(const v1::Definition& def, const v1::Solution& solution,
                      const v1::TimingResult& timing) {
  v1::OwnWork own;
  own.set_min_share(MinOwnKernelShare(def));
  const std::string& language = solution.spec().language();
  if (language != "python" && language != "triton" && language != "cuda") {
    own.set_not_measured(absl::StrCat("kiln does not attribute the kernels of ", language,
                                      " solutions"));
    return own;
  }
  if (timing.timer() != "cupti" || timing.gpu_work().empty()) {
    own.set_not_measured(
        timing.timer() == "host"
            ? "not measured on the host backend (no GPU kernels)"
            : absl::StrCat("not measured: the ", timing.timer().empty() ? "?" : timing.timer(),
                           " timer records no kernels (CUPTI activity records are needed)"));
    return own;
  }
  const SourceKernels sources = KernelsOfSources(solution);
  double own_total = 0, total = 0;
  std::set<std::string> names;
  for (const v1::GpuWork& work : timing.gpu_work()) {
    total += work.total_ms();
    if (!IsKernel(work.signature())) continue;
    const std::string name = work.signature().substr(kKernel.size());
    if (!IsOwnKernel(name, sources)) continue;
    own_total += work.total_ms();
    names.insert(KernelFunctionName(name));
  }
  const int64_t calls = static_cast<int64_t>(timing.trials()) * timing.iterations();
  const double per_call = calls > 0 ? 1.0 / static_cast<double>(calls) : 0;
  own.set_measured(true);
  own.set_share(total > 0 ? own_total / total : 0);
  own.set_own_ms(own_total * per_call);
  own.set_total_ms(total * per_call);
  for (const std::string& name : names) own.add_own_kernels(name);
  return own;
}

std::optional<OwnKernelFinding> JudgeOwnKernelShare(const v1::Definition& def,
                                                    const v1::OwnWork& own) {
  if (!own.measured() || own.min_share() <= 0 || own.share() >= own.min_share()) {
    return std::nullopt;
  }
  const std::string kernels =
      own.own_kernels().empty()
          ? "none of its kernels ran"
          : absl::StrCat("its kernels: ", absl::StrJoin(own.own_kernels(), ", "));
  std::string detail = absl::StrFormat(
      "the solution's own kernels did %s of the timed calls' GPU time (%.6f of %.6f ms per "
      "call; %s), the rest was torch's or a library's kernels, copies and fills; this "
      "definition needs at least %s",
      ShareText(own.share()), own.own_ms(), own.total_ms(), kernels, ShareText(own.min_share()));
  return OwnKernelFinding{Reason(kOwnKernelShare, detail), AllowsTorchOnly(def)};
}

}  // namespace kiln::integrity
