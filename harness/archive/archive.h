// The harness archive: runs, traces, definitions, workloads and content-addressed artifacts in
// one SQLite database (WAL, synchronous=NORMAL, busy timeout). Schema comes from the numbered
// migrations in migrations/harness/, applied at Open inside transactions that also bump
// PRAGMA user_version. One writer connection (serialised by a mutex); reads may run
// concurrently on a pool of read connections. Every state change is one transaction.
#ifndef KILN_HARNESS_ARCHIVE_ARCHIVE_H_
#define KILN_HARNESS_ARCHIVE_ARCHIVE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/v1/harness.pb.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

struct RunFilter {
  std::string definition;  // empty: any
  v1::EvaluationStatus status = v1::STATUS_UNSPECIFIED;  // unspecified: any
  std::string principal;   // empty: any
  std::string exclude_principal;  // empty: none left out
  std::string kind;        // evaluation | profile; empty: any
  int limit = 50;
  std::string page_token;  // opaque; from a previous ListRuns
};

class Archive {
 public:
  // Opens (creating if needed) `dir`/kiln.db and applies pending migrations. Fails with
  // FAILED_PRECONDITION when the database is newer than this binary knows.
  static absl::StatusOr<std::unique_ptr<Archive>> Open(const std::string& dir);
  ~Archive();

  int SchemaVersion() const;

  // Runs still QUEUED..TIMING from a previous process become DONE/INTERRUPTED (their traces
  // too, where missing). Returns how many. Called once at start, before serving.
  absl::StatusOr<int> MarkInterrupted();

  // A new run: state, definition, solution (its sources are stored as artifacts), mode, backend,
  // principal, created time. `run.run_id` must be set.
  absl::Status CreateRun(const v1::Run& run);
  // State change (and the time spent in the previous stage, in seconds).
  absl::Status UpdateRunState(const std::string& run_id, v1::RunState state);
  // Compile outcome: log, cache hit, seconds; the binary artifact when present.
  absl::Status RecordCompile(const std::string& run_id, const std::string& compile_log,
                             bool cache_hit, double seconds);
  // The device the run is evaluated on (Run.device_index, device_name, device_pci_bus_id), set
  // when it gets its device slot. FAILED_PRECONDITION once the run is done.
  absl::Status RecordDevice(const std::string& run_id, int device_index,
                            const std::string& device_name, const std::string& pci_bus_id);
  // One workload's trace (insert or replace by (run_id, workload_index)).
  absl::Status PutTrace(const std::string& run_id, int workload_index, const v1::Trace& trace);
  // Final status, reason and stage seconds; state becomes DONE.
  absl::Status FinishRun(const v1::Run& run);
  // Stores complete runs (as GetRun returns them: any state, traces, sources, compile log) in
  // one transaction: all or none. For restoring or merging archives and for filling benchmark
  // archives quickly. ALREADY_EXISTS names the first run id already taken.
  absl::Status ImportRuns(const std::vector<v1::Run>& runs);

  // The whole run with its traces (ordered by workload index) and artifact refs; sources filled
  // in `run.solution` when `include_sources`. NOT_FOUND names the id.
  absl::StatusOr<v1::Run> GetRun(const std::string& run_id, bool include_sources);
  // Run ids that begin or end with `fragment` (a hex string: the start of an id, or its random
  // part as progress lines show it), with the principal of each; at most `limit`.
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> FindRunIds(
      const std::string& fragment, int limit);
  // Newest first. Uses indexes on (created), (definition, created), (status, created).
  absl::StatusOr<v1::ListRunsResponse> ListRuns(const RunFilter& filter);
  absl::StatusOr<int64_t> CountRuns();
  // The profile runs (kind "profile") `principal` started at or after `since_unix_ms`, and the
  // creation time of the oldest of them (0 when none).
  struct ProfileCount {
    int64_t count = 0;
    int64_t oldest_unix_ms = 0;
  };
  absl::StatusOr<ProfileCount> CountProfilesSince(const std::string& principal,
                                                  int64_t since_unix_ms);
  // One run of each principal on `definition` in `mode`, among the finished runs evaluated on
  // the registered workloads that are not confirmation runs. Rule "best": the PASSED run of
  // lowest mean latency (ties: earlier first). Rule "latest": the principal's designated run,
  // else its newest finished one, whatever its verdict. Fills the run columns of each entry
  // (score and its interval are the caller's, from the traces); order: by mean latency.
  absl::StatusOr<std::vector<v1::LeaderboardEntry>> Leaderboard(const std::string& definition,
                                                                const std::string& mode,
                                                                const std::string& rule);
  // Makes `run_id` the designated run of (principal, definition, mode); returns the run it
  // replaced ("" when none). The caller checks that the run may be ranked.
  absl::StatusOr<std::string> SetDesignatedRun(const std::string& principal,
                                               const std::string& definition,
                                               const std::string& mode,
                                               const std::string& run_id);
  // Removes it; returns the run that was designated ("" when none).
  absl::StatusOr<std::string> ClearDesignatedRun(const std::string& principal,
                                                 const std::string& definition,
                                                 const std::string& mode);

  // Content-addressed blobs. Put returns the sha256; identical content is stored once.
  absl::StatusOr<std::string> PutArtifact(const std::string& run_id, const std::string& kind,
                                          const std::string& name, const std::string& content);
  absl::StatusOr<std::string> GetArtifact(const std::string& sha256);
  // Whether some run of `principal` references the blob `sha256`.
  absl::StatusOr<bool> ArtifactBelongsTo(const std::string& sha256, const std::string& principal);

  // Definitions and their workloads. Put replaces the definition and its workload list
  // atomically (workloads keyed by uuid keep their order).
  absl::Status PutDefinition(const v1::Definition& def, const std::vector<v1::Workload>& workloads,
                             bool builtin);
  absl::StatusOr<v1::Definition> GetDefinition(const std::string& name);
  absl::StatusOr<std::vector<v1::Workload>> GetWorkloads(const std::string& definition);
  // Every definition by name, with the settings an operator made (DefinitionSummary.settings).
  absl::StatusOr<v1::ListDefinitionsResponse> ListDefinitions();

  // How an operator has a definition judged (kiln defs set). The settings are kept apart from
  // the definition: PutDefinition leaves them alone. NOT_FOUND for an unknown definition; an
  // empty message when none were made.
  absl::StatusOr<v1::DefinitionSettings> GetDefinitionSettings(const std::string& definition);
  // In one transaction: clears the stored settings when `reset`, then sets the fields set in
  // `update` (validated by the caller), and returns what is stored now. A change of tolerance
  // also clears the definition's integrity warning, which was found at the old tolerances.
  absl::StatusOr<v1::DefinitionSettings> UpdateDefinitionSettings(
      const std::string& definition, const v1::DefinitionSettings& update, bool reset);

  // The solution registry: solutions stored under (definition, name), named by runs as the
  // baseline "solution:NAME". PutSolution stores `solution` (validated by the caller) under
  // solution.definition(), which must be registered (NOT_FOUND), as `name`: the same content
  // already there is "unchanged"; other content is ALREADY_EXISTS unless `replace`.
  absl::StatusOr<v1::PutSolutionResponse> PutSolution(const std::string& name,
                                                      const v1::Solution& solution, bool replace);
  // NOT_FOUND naming the definition and the name.
  absl::StatusOr<v1::Solution> GetSolution(const std::string& definition, const std::string& name);
  // By definition, then name; only `definition`'s when it is not empty.
  absl::StatusOr<v1::ListSolutionsResponse> ListSolutions(const std::string& definition);

  // Small key/value store for the node (server secret, cached reference latencies).
  absl::StatusOr<std::optional<std::string>> GetSetting(const std::string& key);
  absl::Status PutSetting(const std::string& key, const std::string& value);

 private:
  struct Impl;
  explicit Archive(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln

#endif  // KILN_HARNESS_ARCHIVE_ARCHIVE_H_
