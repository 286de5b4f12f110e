#include "harness/compile/compiler.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/common/demangle.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "harness/compile/source_tree.h"

namespace kiln {

namespace {

constexpr char kLog[] = "compile.log";
constexpr char kOkMarker[] = "ok";
constexpr size_t kMaxListedSymbols = 20;

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

struct EntryPoint {
  std::string file;
  std::string function;
};

bool IsCIdentifier(const std::string& s) {
  if (s.empty() || absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// "file::function", where the file is one of the sources and the function a C identifier.
absl::StatusOr<EntryPoint> ParseEntryPoint(const v1::Solution& solution) {
  const std::string& ep = solution.spec().entry_point();
  size_t sep = ep.rfind("::");
  if (sep == std::string::npos || sep == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.entry_point: '", ep, "' is not of the form 'file::function'"));
  }
  EntryPoint entry{ep.substr(0, sep), ep.substr(sep + 2)};
  if (!IsCIdentifier(entry.function)) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.entry_point: '", entry.function, "' is not a valid C function name"));
  }
  for (const v1::SourceFile& source : solution.sources()) {
    if (source.path() == entry.file) return entry;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("spec.entry_point: file '", entry.file, "' is not among the sources"));
}

// SHA-256 over every regular file under `dir` (relative path + content, sorted by path); ""
// when `dir` is empty. An unreadable file is hashed as its error, so it still changes the key.
std::string DigestTree(const std::string& dir) {
  if (dir.empty()) return {};
  std::vector<std::pair<std::string, std::string>> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string path = it->path().string();
    absl::StatusOr<std::string> content = ReadFile(path);
    files.emplace_back(std::filesystem::relative(it->path(), dir, ec).string(),
                       content.ok() ? *content : content.status().ToString());
  }
  std::sort(files.begin(), files.end());
  Sha256 hash;
  hash.AddPart(absl::StrCat(files.size()));
  for (const auto& [path, content] : files) {
    hash.AddPart(path);
    hash.AddPart(content);
  }
  return hash.HexDigest();
}

std::string CacheKey(const v1::Solution& solution, const Toolchain& toolchain,
                     const std::string& target, const std::string& headers_digest) {
  Sha256 hash;
  hash.AddPart("kiln compile cache v1");
  hash.AddPart(headers_digest);
  hash.AddPart(solution.spec().language());
  hash.AddPart(solution.spec().entry_point());
  std::vector<const v1::SourceFile*> sources;
  for (const v1::SourceFile& source : solution.sources()) sources.push_back(&source);
  std::sort(sources.begin(), sources.end(),
            [](const auto* a, const auto* b) { return a->path() < b->path(); });
  hash.AddPart(absl::StrCat(sources.size()));  // counts keep the lists from running together
  for (const v1::SourceFile* source : sources) {
    hash.AddPart(source->path());
    hash.AddPart(source->content());
  }
  std::vector<std::string> dependencies(solution.spec().dependencies().begin(),
                                        solution.spec().dependencies().end());
  std::sort(dependencies.begin(), dependencies.end());
  hash.AddPart(absl::StrCat(dependencies.size()));
  for (const std::string& dependency : dependencies) hash.AddPart(dependency);
  hash.AddPart(toolchain.Name());
  hash.AddPart(toolchain.Version());
  std::vector<std::string> flags = toolchain.Flags();
  hash.AddPart(absl::StrCat(flags.size()));
  for (const std::string& flag : flags) hash.AddPart(flag);
  hash.AddPart(target);
  hash.AddPart(toolchain.CacheSalt(solution));
  return hash.HexDigest();
}

// A published cache folder holding `artifact`, or nullopt when there is none (or only a damaged
// one).
std::optional<CompileOutput> LoadCached(const std::string& entry_dir, const std::string& artifact) {
  absl::StatusOr<std::string> log = ReadFile(entry_dir + "/" + kLog);
  if (!log.ok()) return std::nullopt;
  CompileOutput out;
  out.log = *std::move(log);
  out.kernel_resources = ParsePtxasResources(out.log);  // nvcc's -Xptxas -v lines, if any
  out.ok = Exists(entry_dir + "/" + kOkMarker);
  if (out.ok) {
    out.artifact_path = entry_dir + "/" + artifact;
    if (!Exists(out.artifact_path)) return std::nullopt;
  }
  return out;
}

// "relu_kernel(float const*, float*, int) [_Z11relu_kernelPKfPfi]"; a C name as it is.
std::string Demangled(const std::string& name) {
  std::string text = Demangle(name);
  return text != name ? absl::StrCat(text, " [", name, "]") : name;
}

// Appends to out->log and clears out->ok unless `library` exports `function`.
void CheckEntryExported(const std::string& library, const std::string& function,
                        CompileOutput* out) {
  absl::StatusOr<ElfSymbols> symbols = ReadElfDynamicSymbols(library);
  if (!symbols.ok()) {
    out->ok = false;
    absl::StrAppend(&out->log, "cannot read the compiled library: ", symbols.status().message(),
                    "\n");
    return;
  }
  const std::vector<std::string>& defined = symbols->defined;
  if (std::find(defined.begin(), defined.end(), function) != defined.end()) return;
  out->ok = false;
  absl::StrAppend(&out->log, "entry point '", function,
                  "' is not exported by the compiled library (did you declare it extern \"C\"?)\n");
  if (!defined.empty() && defined.size() <= kMaxListedSymbols) {
    std::vector<std::string> listed;
    for (const std::string& name : defined) listed.push_back(Demangled(name));
    absl::StrAppend(&out->log, "exported symbols: ", absl::StrJoin(listed, ", "), "\n");
  }
}

absl::StatusOr<Toolchain*> FindToolchain(const std::vector<std::unique_ptr<Toolchain>>& toolchains,
                                         const std::string& language) {
  auto handles = [&](const std::string& lang) {
    for (const auto& toolchain : toolchains) {
      if (toolchain->Handles(lang)) return toolchain.get();
    }
    return static_cast<Toolchain*>(nullptr);
  };
  if (Toolchain* toolchain = handles(language); toolchain != nullptr) return toolchain;
  std::vector<std::string> supported;
  for (const char* known : {"cpp", "cuda", "opencl", "python", "triton"}) {
    if (handles(known) != nullptr) supported.push_back(known);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("spec.language: '", language, "' is not supported by this node (supported: ",
                   supported.empty() ? "none" : absl::StrJoin(supported, ", "), ")"));
}

// Removes a build folder when the build is over, however it ended.
class ScopedTree {
 public:
  explicit ScopedTree(std::string path) : path_(std::move(path)) {}
  ScopedTree(const ScopedTree&) = delete;
  ScopedTree& operator=(const ScopedTree&) = delete;
  ~ScopedTree() { (void)RemoveTree(path_); }

 private:
  std::string path_;
};

absl::Status SyncFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open ", path));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return absl::InternalError(absl::StrCat("cannot fsync ", path));
  return absl::OkStatus();
}

// Every regular file under `dir` on disk.
absl::Status SyncTree(const std::string& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    if (absl::Status s = SyncFile(it->path().string()); !s.ok()) return s;
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

// Lays out a finished build in `dir` as a cache folder: the artifact only when ok,
// compile.log, and the ok marker last, everything on disk before the folder is published.
absl::Status Stage(const std::string& dir, const std::string& artifact, const CompileOutput& out) {
  const std::string library = dir + "/" + artifact;
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(library, ec);
  if (!out.ok) {
    if (folder) {
      (void)RemoveTree(library);
    } else {
      ::unlink(library.c_str());
    }
  } else if (absl::Status s = folder ? SyncTree(library) : SyncFile(library); !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFile(dir + "/" + kLog, out.log, /*durable=*/true); !s.ok()) return s;
  if (out.ok) return WriteFile(dir + "/" + kOkMarker, "", /*durable=*/true);
  return absl::OkStatus();
}

}  // namespace

// Builds in a fresh folder under the cache's staging/ and renames the result into place; when
// another build of the same key won the race, its folder is as good as ours.
absl::StatusOr<CompileOutput> Compiler::Build(const v1::Solution& solution, Toolchain& toolchain,
                                              const std::string& function,
                                              const std::string& entry_dir,
                                              const std::atomic<bool>* cancel) {
  const std::string staging_root = cache_dir_ + "/staging";
  if (absl::Status s = MakeDirs(staging_root); !s.ok()) return s;
  absl::StatusOr<std::string> work = MakeTempDir(staging_root, "build");
  if (!work.ok()) return work.status();
  ScopedTree cleanup(*work);
  const std::string staged = *work + "/out";
  if (absl::Status s = MakeDirs(staged); !s.ok()) return s;

  const std::string artifact = toolchain.ArtifactName();
  absl::StatusOr<CompileOutput> out =
      toolchain.Compile(solution, *work, staged + "/" + artifact, cancel);
  if (!out.ok()) return out.status();
  if (out->ok && toolchain.ExportsEntrySymbol()) {
    CheckEntryExported(staged + "/" + artifact, function, &*out);
  }
  if (!out->deterministic) {  // not cached: the next attempt may well succeed
    out->ok = false;
    out->artifact_path.clear();
    return out;
  }
  if (absl::Status s = Stage(staged, artifact, *out); !s.ok()) return s;

  std::lock_guard<std::mutex> lock(mu_);
  if (::rename(staged.c_str(), entry_dir.c_str()) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
    return absl::InternalError(
        absl::StrCat("cannot publish ", entry_dir, ": ", std::strerror(errno)));
  }
  std::optional<CompileOutput> published = LoadCached(entry_dir, artifact);
  if (!published.has_value()) {
    return absl::InternalError(absl::StrCat("compile cache entry ", entry_dir, " is incomplete"));
  }
  return *std::move(published);
}

Compiler::Compiler(std::string cache_dir, std::vector<std::unique_ptr<Toolchain>> toolchains,
                   const std::string& headers_dir)
    : cache_dir_(std::filesystem::absolute(cache_dir).string()),
      toolchains_(std::move(toolchains)),
      headers_digest_(DigestTree(headers_dir)) {}

std::vector<std::pair<std::string, std::string>> Compiler::Toolchains() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& toolchain : toolchains_) {
    out.emplace_back(toolchain->Name(), toolchain->Version());
  }
  return out;
}

absl::StatusOr<CompileOutput> Compiler::Compile(const v1::Solution& solution,
                                                const std::string& target,
                                                const std::atomic<bool>* cancel) {
  const double start_s = NowSeconds();
  absl::StatusOr<Toolchain*> toolchain = FindToolchain(toolchains_, solution.spec().language());
  if (!toolchain.ok()) return toolchain.status();
  absl::StatusOr<EntryPoint> entry = ParseEntryPoint(solution);
  if (!entry.ok()) return entry.status();
  if (absl::Status s = ValidateSourcePaths(solution); !s.ok()) return s;

  const std::string key = CacheKey(solution, **toolchain, target, headers_digest_);
  const std::string entry_dir = absl::StrCat(cache_dir_, "/", key);
  const std::string artifact = (*toolchain)->ArtifactName();
  std::optional<CompileOutput> cached = LoadCached(entry_dir, artifact);
  if (cached.has_value()) {
    cached->cache_hit = true;
  } else {
    if (Exists(entry_dir)) {
      // A damaged entry (a file removed by hand): drop it and build afresh.
      std::lock_guard<std::mutex> lock(mu_);
      if (!LoadCached(entry_dir, artifact).has_value()) (void)RemoveTree(entry_dir);
    }
    absl::StatusOr<CompileOutput> built =
        Build(solution, **toolchain, entry->function, entry_dir, cancel);
    if (!built.ok()) return built.status();
    cached = *std::move(built);
  }
  cached->symbol = entry->function;
  cached->cache_key = key;
  cached->seconds = NowSeconds() - start_s;
  return *std::move(cached);
}

}  // namespace kiln
