// output_reuse: what a worker pays to write one pass of an output into the job folder, written
// into a new file (WriteFileInParts: the pages made as they are written; the pass before it
// unlinked afterwards, as the harness did once it was judged) side by side with the same pass
// written over the file of the pass before it (WriteFileOver: the harness renames a judged pass
// to the output's reuse name; the pages are there already). The content comes 64 MiB at a time
// from one buffer, as a device output's does through the worker's chunk buffer. Modes
// alternate per round; each round writes PASSES passes of MIB MiB in DIR (a tmpfs such as
// /dev/shm is where kiln's job folders live). Prints a JSON object: per mode, the median
// milliseconds of a pass's write (passes after the first) and of the harness's part (the
// unlink, or the rename), and the first pass's write.
//
// Usage: output_reuse DIR MIB PASSES ROUNDS
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/common/files.h"

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Times {
  std::vector<double> first, later, harness;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: output_reuse DIR MIB PASSES ROUNDS\n");
    return 2;
  }
  const std::string dir = absl::StrCat(argv[1], "/kiln-output-reuse-", ::getpid());
  const int64_t bytes = std::atoll(argv[2]) << 20;
  const int passes = std::atoi(argv[3]);
  const int rounds = std::atoi(argv[4]);
  if (bytes <= 0 || passes < 2 || rounds < 1 || !kiln::MakeDirs(dir).ok()) {
    std::fprintf(stderr, "output_reuse: bad arguments or cannot make %s\n", dir.c_str());
    return 2;
  }
  constexpr int64_t kChunk = int64_t{64} << 20;
  std::vector<char> chunk(static_cast<size_t>(std::min(kChunk, bytes)));
  std::map<std::string, Times> times;
  const std::string reuse = dir + "/reuse_y.bin";
  for (int r = 0; r < rounds; ++r) {
    for (int m = 0; m < 2; ++m) {
      const bool over = (m + r) % 2 == 1;
      Times& t = times[over ? "over" : "new"];
      std::string previous;
      for (int p = 0; p < passes; ++p) {
        const std::string path = absl::StrCat(dir, "/t", p, "_y.bin");
        std::fill(chunk.begin(), chunk.end(), static_cast<char>(p + 1));
        int64_t at = 0;
        auto next = [&]() -> absl::StatusOr<std::string_view> {
          const int64_t n = std::min(static_cast<int64_t>(chunk.size()), bytes - at);
          if (n <= 0) return std::string_view();
          at += n;
          return std::string_view(chunk.data(), static_cast<size_t>(n));
        };
        const double t0 = Now();
        absl::Status s = over ? kiln::WriteFileOver(path, reuse, next)
                              : kiln::WriteFileInParts(path, next);
        const double written = Now() - t0;
        if (!s.ok()) {
          std::fprintf(stderr, "output_reuse: %s\n", std::string(s.message()).c_str());
          return 1;
        }
        (p == 0 ? t.first : t.later).push_back(written * 1e3);
        // The harness's part once the pass is judged: the file given back for reuse, or the
        // pass before it removed.
        const double t1 = Now();
        if (over) {
          if (::rename(path.c_str(), reuse.c_str()) != 0) return 1;
        } else if (!previous.empty()) {
          ::unlink(previous.c_str());
        }
        t.harness.push_back((Now() - t1) * 1e3);
        previous = path;
      }
      ::unlink(previous.c_str());
      ::unlink(reuse.c_str());
    }
  }
  (void)kiln::RemoveTree(dir);
  std::string out = absl::StrFormat("{\"mib\": %d, \"passes\": %d, \"rounds\": %d",
                                    static_cast<int>(bytes >> 20), passes, rounds);
  for (const auto& [mode, t] : times) {
    absl::StrAppendFormat(&out,
                          ", \"%s\": {\"first_pass_ms\": %.2f, \"later_pass_ms\": %.2f, "
                          "\"harness_ms\": %.2f}",
                          mode, Median(t.first), Median(t.later), Median(t.harness));
  }
  std::printf("%s}\n", out.c_str());
  return 0;
}
