// The controller's own SQLite archive (data-dir/controller.db, schema in migrations/controller/):
// campaigns, rounds, agent requests, candidates by content hash, evaluations, promotions and
// events. Every state change is one transaction, so a killed controller restarts from exactly
// what it had recorded. Thread-safe: one connection behind a mutex (the controller writes little).
#ifndef KILN_CONTROLLER_CAMPAIGN_ARCHIVE_H_
#define KILN_CONTROLLER_CAMPAIGN_ARCHIVE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/controller.pb.h"
#include "sqlite/sqlite_connection.h"

namespace kiln::controller {

struct CampaignRow {
  std::string id, name, definition, spec_yaml, spec_files_json;
  std::string status = "running";  // running | completed | cancelled | failed
  std::string reason;
  std::string state_json = "{}";
  double baseline_latency_ms = 0, best_latency_ms = 0;
  std::string incumbent_hash;
  int64_t created_unix_ms = 0, finished_unix_ms = 0;
  std::string owner = "local";  // the principal the campaign is for
};

struct RequestRow {
  int64_t id = 0;
  std::string campaign_id;
  int round = 0;
  std::string agent, pass, prompt;
  std::string state = "pending";  // pending | answered | failed
  std::string response, error;
  double cost_usd = 0;
  int turns = 0, candidate_count = 0;
  int agent_evaluations = 0;  // evaluations the agent made itself through kiln mcp
};

struct CandidateRow {
  std::string campaign_id, hash;
  int64_t request_id = 0;
  int round = 0;
  std::string agent, params_json = "{}", solution_json;
  std::string state = "pending";  // pending | evaluated | invalid
  std::string status;
  double mean_latency_ms = 0;
};

struct EvaluationRow {
  int64_t id = 0;
  std::string campaign_id, candidate_hash;
  std::string purpose;  // first | confirm | baseline
  int round = 0;
  std::string harness, run_id;
  std::string state = "submitted";  // submitted | done | failed
  std::string status;
  double mean_latency_ms = 0, gpu_seconds = 0;
  std::string result_json = "{}";
  int attempts = 0;
};

// One attempt of an evaluation on a harness (table evaluation_attempts).
struct AttemptRow {
  std::string campaign_id, candidate_hash, purpose, harness, run_id;
  // running | verdict | interrupted | abandoned | broken | failed | cancelled
  std::string outcome = "running";
  std::string detail;
  int64_t started_unix_ms = 0, finished_unix_ms = 0;
};

struct EventRow {
  int64_t seq = 0, unix_ms = 0;
  std::string kind, message;
};

int64_t NowUnixMs();

class CampaignArchive {
 public:
  // Opens (creating) `data_dir`/controller.db and applies the controller's migrations.
  static absl::StatusOr<std::unique_ptr<CampaignArchive>> Open(const std::string& data_dir);

  [[nodiscard]] absl::Status CreateCampaign(const CampaignRow& row);
  // Writes every mutable column of `row` (status, reason, state, latencies, incumbent, finish).
  [[nodiscard]] absl::Status SaveCampaign(const CampaignRow& row);
  absl::StatusOr<std::optional<CampaignRow>> GetCampaign(const std::string& id);
  // Newest first.
  // The newest `limit` campaigns; only those of `owner` when it is not empty.
  absl::StatusOr<std::vector<CampaignRow>> ListCampaigns(int limit, const std::string& owner = "");
  absl::StatusOr<std::vector<std::string>> RunningCampaignIds();

  // Appends an event and returns its sequence number (1, 2, ... per campaign).
  absl::StatusOr<int64_t> AddEvent(const std::string& id, const std::string& kind,
                                   const std::string& message);
  absl::StatusOr<std::vector<EventRow>> EventsAfter(const std::string& id, int64_t seq);

  [[nodiscard]] absl::Status StartRound(const std::string& id, int round, const std::string& pass,
                                        const std::string& agent, const std::string& direction,
                                        const std::string& evidence_json);
  [[nodiscard]] absl::Status FinishRound(const std::string& id, int round,
                                         const std::string& outcome);
  // Rounds as (round, pass, agent, direction, outcome), oldest first.
  absl::StatusOr<std::vector<std::vector<std::string>>> Rounds(const std::string& id);

  absl::StatusOr<int64_t> AddRequest(const RequestRow& row);
  [[nodiscard]] absl::Status FinishRequest(const RequestRow& row);
  absl::StatusOr<std::vector<RequestRow>> Requests(const std::string& id);

  // A hash already recorded for the campaign is left as it is (ALREADY_EXISTS is not an error).
  [[nodiscard]] absl::Status AddCandidate(const CandidateRow& row);
  absl::StatusOr<std::optional<CandidateRow>> GetCandidate(const std::string& id,
                                                           const std::string& hash);
  absl::StatusOr<std::vector<CandidateRow>> CandidatesOfRequest(int64_t request_id);
  // Every candidate of the campaign, by round, oldest first.
  absl::StatusOr<std::vector<CandidateRow>> Candidates(const std::string& id);
  [[nodiscard]] absl::Status UpdateCandidate(const CandidateRow& row);

  // Inserts or replaces the evaluation of (campaign, hash, purpose).
  [[nodiscard]] absl::Status PutEvaluation(const EvaluationRow& row);
  absl::StatusOr<std::optional<EvaluationRow>> GetEvaluation(const std::string& id,
                                                             const std::string& hash,
                                                             const std::string& purpose);
  absl::StatusOr<std::vector<EvaluationRow>> Evaluations(const std::string& id);

  // Records an attempt started now (its started_unix_ms and finished_unix_ms are set here:
  // finished now unless its outcome is "running").
  [[nodiscard]] absl::Status AddAttempt(const AttemptRow& row);
  // Ends the running attempt of `run_id` on `harness`; NOT_FOUND when there is none.
  [[nodiscard]] absl::Status EndAttempt(const std::string& id, const std::string& harness,
                                        const std::string& run_id, const std::string& outcome,
                                        const std::string& detail);
  absl::StatusOr<std::vector<AttemptRow>> Attempts(const std::string& id);

  [[nodiscard]] absl::Status AddPromotion(const std::string& id, const v1::Promotion& p);
  absl::StatusOr<std::vector<v1::Promotion>> Promotions(const std::string& id);

 private:
  explicit CampaignArchive(std::unique_ptr<archive::Connection> conn) : conn_(std::move(conn)) {}
  std::mutex mu_;
  std::unique_ptr<archive::Connection> conn_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_CAMPAIGN_ARCHIVE_H_
