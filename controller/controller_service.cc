#include "controller/controller_service.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>

#include "access/call_metadata.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/campaign_view.h"
#include "controller/loop_state.h"
#include "harness/model/json_interop.h"

namespace kiln::controller {

namespace {

std::string NewCampaignId() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mu);
  return absl::StrFormat("c%s-%06x", absl::StrFormat("%d", NowUnixMs() / 1000),
                         static_cast<unsigned>(rng() & 0xffffff));
}

absl::StatusOr<CampaignSpec> SpecOf(const CampaignRow& row) {
  std::map<std::string, std::string> files;
  nlohmann::json parsed = nlohmann::json::parse(row.spec_files_json, nullptr, false);
  if (parsed.is_object()) {
    for (const auto& [k, v] : parsed.items()) files[k] = v.get<std::string>();
  }
  MapCampaignFiles shipped(std::move(files));
  return ParseCampaignSpec(row.spec_yaml, shipped);
}

}  // namespace

ControllerService::ControllerService(CampaignArchive& archive, HarnessPool& pool,
                                     std::string data_dir, Authenticator auth)
    : archive_(archive), pool_(pool), auth_(std::move(auth)), data_dir_(std::move(data_dir)) {
  pool_.SetStateListener([this](const HarnessHealth& health) { OnHarnessState(health); });
}

void ControllerService::OnHarnessState(const HarnessHealth& health) {
  std::vector<std::string> running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, runner] : runners_) running.push_back(id);
  }
  const std::string message =
      absl::StrCat("harness ", health.address, " ", HarnessStateName(health.state),
                   health.last_error.empty() ? "" : ": ", health.last_error);
  for (const std::string& id : running) {
    absl::StatusOr<std::optional<CampaignRow>> row = archive_.GetCampaign(id);
    if (!row.ok() || !row->has_value() || (*row)->status != "running") continue;
    (void)archive_.AddEvent(id, "harness", message);
    Notify(id);
  }
}

void ControllerService::AddRoundsAndCandidates(const std::string& id, v1::Campaign* campaign) {
  if (auto rounds = archive_.Rounds(id); rounds.ok()) {
    for (const std::vector<std::string>& r : *rounds) {
      v1::RoundSummary* out = campaign->add_rounds();
      out->set_round(std::stoi(r.at(0)));
      out->set_pass(r.at(1));
      out->set_agent(r.at(2));
      out->set_direction(r.at(3));
      out->set_outcome(r.at(4));
    }
  }
  if (auto candidates = archive_.Candidates(id); candidates.ok()) {
    for (const CandidateRow& c : *candidates) {
      v1::CandidateSummary* out = campaign->add_candidates();
      out->set_hash(c.hash);
      out->set_round(c.round);
      out->set_agent(c.agent);
      nlohmann::json solution = nlohmann::json::parse(c.solution_json, nullptr, false);
      if (solution.is_object()) out->set_solution_name(solution.value("name", ""));
      out->set_state(c.state);
      out->set_status(c.status);
      out->set_mean_latency_ms(c.mean_latency_ms);
    }
  }
}

void ControllerService::AddHarnesses(const std::string& id, v1::Campaign* campaign) {
  std::map<std::string, std::pair<int, int>> counts;  // harness -> verdicts, given up
  if (absl::StatusOr<std::vector<AttemptRow>> attempts = archive_.Attempts(id); attempts.ok()) {
    for (const AttemptRow& a : *attempts) {
      if (a.outcome == "verdict") ++counts[a.harness].first;
      if (a.outcome == "abandoned" || a.outcome == "broken" || a.outcome == "interrupted") {
        ++counts[a.harness].second;
      }
    }
  }
  for (const HarnessHealth& h : pool_.Health()) {
    v1::HarnessHealth* out = campaign->add_harnesses();
    out->set_address(h.address);
    out->set_state(HarnessStateName(h.state));
    out->set_since_unix_ms(h.since_unix_ms);
    out->set_last_answer_unix_ms(h.last_answer_unix_ms);
    out->set_last_error(h.last_error);
    out->set_in_flight(h.in_flight);
    out->set_queue_depth(h.queue_depth);
    out->set_running(h.running);
    out->set_verdicts(counts[h.address].first);
    out->set_given_up(counts[h.address].second);
  }
}

absl::StatusOr<Principal> ControllerService::Caller(grpc::ServerContext* context) const {
  if (auth_.open()) return LocalOperator();
  absl::StatusOr<Principal> caller = auth_.Authenticate(AuthorizationMetadata(*context));
  if (!caller.ok()) {
    std::fprintf(stderr, "kiln-controller: unauthenticated call from %s: %s\n",
                 context->peer().c_str(), std::string(caller.status().message()).c_str());
  }
  return caller;
}

absl::StatusOr<CampaignRow> ControllerService::LoadFor(const Principal& caller,
                                                       const std::string& id) {
  absl::StatusOr<CampaignRow> row = Load(id);
  if (!row.ok()) return row.status();
  if (caller.role != Role::kOperator && row->owner != caller.name) {
    return absl::PermissionDeniedError(absl::StrCat(
        "campaign ", id, " is not ", caller.name, "'s: a ", RoleName(caller.role),
        " sees only the campaigns started for it"));
  }
  return row;
}

ControllerService::~ControllerService() {
  pool_.SetStateListener(nullptr);
  Shutdown();
}

void ControllerService::Notify(const std::string&) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
  }
  changed_.notify_all();
}

void ControllerService::Launch(CampaignSpec spec, CampaignRow row) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_) return;
  const std::string id = row.id;
  auto runner = std::make_unique<CampaignRunner>(
      archive_, pool_, std::move(spec), std::move(row), data_dir_ + "/workspaces",
      [this](const std::string& campaign) { Notify(campaign); });
  CampaignRunner* raw = runner.get();
  runners_[id] = std::move(runner);
  threads_[id] = std::thread([this, raw] {
    raw->Run();
    Notify("");
  });
}

int ControllerService::ResumeAll() {
  absl::StatusOr<std::vector<std::string>> ids = archive_.RunningCampaignIds();
  if (!ids.ok()) return 0;
  int resumed = 0;
  for (const std::string& id : *ids) {
    absl::StatusOr<CampaignRow> row = Load(id);
    if (!row.ok()) continue;
    absl::StatusOr<CampaignSpec> spec = SpecOf(*row);
    if (!spec.ok()) {
      row->status = "failed";
      row->reason = absl::StrCat("campaign file no longer valid: ", spec.status().message());
      row->finished_unix_ms = NowUnixMs();
      (void)archive_.SaveCampaign(*row);
      continue;
    }
    Launch(*std::move(spec), *std::move(row));
    ++resumed;
  }
  return resumed;
}

void ControllerService::Shutdown() {
  std::map<std::string, std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    for (auto& [id, runner] : runners_) runner->Stop();
    threads.swap(threads_);
  }
  for (auto& [id, t] : threads) {
    if (t.joinable()) t.join();
  }
  changed_.notify_all();
}

absl::StatusOr<CampaignRow> ControllerService::Load(const std::string& id) {
  absl::StatusOr<std::optional<CampaignRow>> row = archive_.GetCampaign(id);
  if (!row.ok()) return row.status();
  if (!row->has_value()) return absl::NotFoundError(absl::StrCat("no campaign '", id, "'"));
  return **row;
}

grpc::Status ControllerService::StartCampaign(grpc::ServerContext* context,
                                              const v1::StartCampaignRequest* request,
                                              v1::Campaign* response) {
  absl::StatusOr<Principal> caller = Caller(context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (absl::Status s = RequireOperator(*caller, "starting a campaign"); !s.ok()) return ToGrpcStatus(s);
  const std::string owner = request->owner().empty() ? caller->name : request->owner();
  if (!ValidPrincipalName(owner)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("owner: '", owner, "' is not a principal name (letters, "
                                     "digits, '.', '_' and '-', at most 64)"));
  }
  std::map<std::string, std::string> files;
  nlohmann::json files_json = nlohmann::json::object();
  for (const v1::CampaignFile& f : request->files()) {
    files[f.path()] = f.content();
    files_json[f.path()] = f.content();
  }
  MapCampaignFiles shipped(files);
  absl::StatusOr<CampaignSpec> spec = ParseCampaignSpec(request->spec_yaml(), shipped);
  if (!spec.ok()) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat(request->spec_name().empty() ? "campaign" : request->spec_name(), ": ",
                     spec.status().message()));
  }
  CampaignRow row;
  row.id = NewCampaignId();
  row.name = spec->name;
  row.definition = spec->definition_name;
  row.spec_yaml = request->spec_yaml();
  row.spec_files_json = files_json.dump();
  row.created_unix_ms = NowUnixMs();
  row.owner = owner;
  if (absl::Status s = archive_.CreateCampaign(row); !s.ok()) return ToGrpcStatus(s);
  absl::StatusOr<v1::Campaign> view = BuildCampaign(archive_, row);
  if (!view.ok()) return ToGrpcStatus(view.status());
  *response = *view;
  Launch(*std::move(spec), std::move(row));
  return grpc::Status::OK;
}

grpc::Status ControllerService::GetCampaign(grpc::ServerContext* context,
                                            const v1::GetCampaignRequest* request,
                                            v1::Campaign* response) {
  absl::StatusOr<Principal> caller = Caller(context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::StatusOr<CampaignRow> row = LoadFor(*caller, request->campaign_id());
  if (!row.ok()) return ToGrpcStatus(row.status());
  absl::StatusOr<v1::Campaign> view = BuildCampaign(archive_, *row);
  if (!view.ok()) return ToGrpcStatus(view.status());
  *response = *view;
  AddHarnesses(row->id, response);
  AddRoundsAndCandidates(row->id, response);
  return grpc::Status::OK;
}

grpc::Status ControllerService::ListCampaigns(grpc::ServerContext* context,
                                              const v1::ListCampaignsRequest* request,
                                              v1::ListCampaignsResponse* response) {
  absl::StatusOr<Principal> caller = Caller(context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  int limit = request->limit() > 0 ? std::min(request->limit(), 1000) : 50;
  absl::StatusOr<std::vector<CampaignRow>> rows = archive_.ListCampaigns(
      limit, caller->role == Role::kOperator ? std::string() : caller->name);
  if (!rows.ok()) return ToGrpcStatus(rows.status());
  for (const CampaignRow& row : *rows) {
    absl::StatusOr<v1::Campaign> view = BuildCampaign(archive_, row);
    if (!view.ok()) return ToGrpcStatus(view.status());
    *response->add_campaigns() = *view;
  }
  return grpc::Status::OK;
}

grpc::Status ControllerService::WatchCampaign(grpc::ServerContext* context,
                                              const v1::WatchCampaignRequest* request,
                                              grpc::ServerWriter<v1::CampaignEvent>* writer) {
  absl::StatusOr<Principal> caller = Caller(context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (absl::StatusOr<CampaignRow> first = LoadFor(*caller, request->campaign_id()); !first.ok()) {
    return ToGrpcStatus(first.status());
  }
  int64_t seq = request->after_seq();
  while (!context->IsCancelled()) {
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation = generation_;
    }
    absl::StatusOr<CampaignRow> row = Load(request->campaign_id());
    if (!row.ok()) return ToGrpcStatus(row.status());
    absl::StatusOr<std::vector<EventRow>> events = archive_.EventsAfter(row->id, seq);
    if (!events.ok()) return ToGrpcStatus(events.status());
    if (!events->empty()) {
      absl::StatusOr<v1::Campaign> view = BuildCampaign(archive_, *row);
      if (!view.ok()) return ToGrpcStatus(view.status());
      for (const EventRow& e : *events) {
        v1::CampaignEvent event;
        event.set_seq(e.seq);
        event.set_unix_ms(e.unix_ms);
        event.set_kind(e.kind);
        event.set_message(e.message);
        *event.mutable_campaign() = *view;
        if (!writer->Write(event)) return grpc::Status::OK;
        seq = e.seq;
      }
      continue;
    }
    // `row` was read before the events: a campaign's "ended" event is written before its status
    // changes, so one seen ended there has had every event sent by now.
    if (row->status != "running") return grpc::Status::OK;
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, std::chrono::milliseconds(500),
                      [&] { return generation_ != generation || shutting_down_; });
    if (shutting_down_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "controller stopping");
  }
  return grpc::Status::OK;
}

grpc::Status ControllerService::CancelCampaign(grpc::ServerContext* context,
                                               const v1::CancelCampaignRequest* request,
                                               v1::Campaign* response) {
  absl::StatusOr<Principal> caller = Caller(context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (absl::Status s = RequireOperator(*caller, "cancelling a campaign"); !s.ok()) {
    return ToGrpcStatus(s);
  }
  absl::StatusOr<CampaignRow> row = Load(request->campaign_id());
  if (!row.ok()) return ToGrpcStatus(row.status());
  std::thread thread;
  if (row->status == "running") {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = runners_.find(row->id);
    if (it != runners_.end()) {
      it->second->Cancel();
      thread = std::move(threads_[row->id]);
      threads_.erase(row->id);
    }
  }
  if (thread.joinable()) thread.join();
  row = Load(request->campaign_id());
  if (!row.ok()) return ToGrpcStatus(row.status());
  if (row->status == "running") {  // no runner had it (should not happen): end it here
    row->status = "cancelled";
    row->reason = "cancelled by request";
    row->finished_unix_ms = NowUnixMs();
    // The event before the status, as CampaignRunner::End: see WatchCampaign.
    (void)archive_.AddEvent(row->id, "ended", "cancelled: cancelled by request");
    (void)archive_.SaveCampaign(*row);
    Notify(row->id);
  }
  absl::StatusOr<v1::Campaign> view = BuildCampaign(archive_, *row);
  if (!view.ok()) return ToGrpcStatus(view.status());
  *response = *view;
  return grpc::Status::OK;
}

grpc::Status ControllerService::ExportCampaign(grpc::ServerContext* context,
                                               const v1::ExportCampaignRequest* request,
                                               v1::ExportCampaignResponse* response) {
  absl::StatusOr<Principal> caller = Caller(context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::StatusOr<CampaignRow> row = LoadFor(*caller, request->campaign_id());
  if (!row.ok()) return ToGrpcStatus(row.status());
  if (row->incumbent_hash.empty()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        absl::StrCat("campaign ", row->id,
                                     " has no retained solution: the incumbent is the "
                                     "definition's reference"));
  }
  absl::StatusOr<std::optional<CandidateRow>> c =
      archive_.GetCandidate(row->id, row->incumbent_hash);
  if (!c.ok()) return ToGrpcStatus(c.status());
  if (!c->has_value()) return grpc::Status(grpc::StatusCode::INTERNAL, "incumbent not archived");
  absl::StatusOr<v1::Solution> s = ParseSolutionJson((*c)->solution_json);
  if (!s.ok()) return ToGrpcStatus(s.status());
  response->set_solution_json(SolutionToJson(*s, 2));
  return grpc::Status::OK;
}

}  // namespace kiln::controller
