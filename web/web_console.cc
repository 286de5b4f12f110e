#include "web/web_console.h"

#include <google/protobuf/util/json_util.h>
#include <httplib.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "harness/common/xml_escape.h"
#include "harness/model/samples_artifact.h"
#include "kiln/v1/controller.grpc.pb.h"
#include "kiln/v1/harness.grpc.pb.h"
#include "report/definition_report.h"
#include "report/report_runs.h"
#include "web/source_diff.h"
#include "web/web_pages.h"

namespace kiln {

namespace {

constexpr char kCookie[] = "kiln_token";
constexpr int kPageSize = 100;

std::string ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out, options);
  return out;
}

bool WantsJson(const httplib::Request& req) {
  return absl::StrContains(req.get_header_value("Accept"), "application/json");
}

// A token as the tokens file's clients send it: printable, no separators a cookie cannot hold.
bool PlausibleToken(const std::string& token) {
  if (token.empty() || token.size() > 512) return false;
  for (char c : token) {
    if (!(absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+' ||
          c == '/' || c == '=')) {
      return false;
    }
  }
  return true;
}

// The viewer's token: the Authorization header, else the login cookie.
std::string TokenOf(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  if (absl::StartsWithIgnoreCase(auth, "Bearer ")) {
    return std::string(absl::StripAsciiWhitespace(auth.substr(7)));
  }
  for (absl::string_view part : absl::StrSplit(req.get_header_value("Cookie"), ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, absl::StrCat(kCookie, "="))) return std::string(part);
  }
  return "";
}

int HttpStatus(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAUTHENTICATED: return 401;
    case grpc::StatusCode::PERMISSION_DENIED: return 403;
    case grpc::StatusCode::NOT_FOUND: return 404;
    case grpc::StatusCode::INVALID_ARGUMENT: return 400;
    case grpc::StatusCode::DEADLINE_EXCEEDED: return 504;
    default: return 502;
  }
}

std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

class WebConsoleImpl final : public WebConsole {
 public:
  WebConsoleImpl(const WebConsoleOptions& options, std::shared_ptr<grpc::Channel> channel)
      : options_(options),
        stub_(v1::Harness::NewStub(channel)),
        controller_(v1::Controller::NewStub(channel)) {
    const ListenAccess& a = options.access;
    tls_ = !a.tls_cert.empty() && !a.tls_key.empty();
    if (tls_) {
      // Mutual TLS as on the gRPC port: a browser without a certificate the CA signed gets no
      // page, whatever token it holds.
      server_ = std::make_unique<httplib::SSLServer>(
          a.tls_cert.c_str(), a.tls_key.c_str(),
          a.tls_client_ca.empty() ? nullptr : a.tls_client_ca.c_str());
    } else {
      server_ = std::make_unique<httplib::Server>();
    }
  }
  ~WebConsoleImpl() override { Stop(); }

  absl::Status Bind() {
    if (absl::Status s = CheckExposure(options_.access); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("--http-listen: ", s.message()));
    }
    if (!server_->is_valid()) {
      return absl::InvalidArgumentError(
          "--http-listen: the web console cannot use --tls-cert/--tls-key (unreadable or not "
          "a PEM certificate and key)");
    }
    const size_t colon = options_.access.listen.rfind(':');
    if (colon == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--http-listen: expected HOST:PORT, got '", options_.access.listen, "'"));
    }
    host_ = options_.access.listen.substr(0, colon);
    int port = 0;
    if (!absl::SimpleAtoi(options_.access.listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("--http-listen: bad port in '", options_.access.listen, "'"));
    }
    std::string bind_host = host_;
    if (bind_host.size() > 2 && bind_host.front() == '[') {
      bind_host = bind_host.substr(1, bind_host.size() - 2);
    }
    if (port == 0) {
      port = server_->bind_to_any_port(bind_host);
    } else if (!server_->bind_to_port(bind_host, port)) {
      port = -1;
    }
    if (port <= 0) {
      return absl::UnavailableError(
          absl::StrCat("--http-listen: cannot listen on ", options_.access.listen));
    }
    port_ = port;
    if (options_.controller) {
      // The controller serves kiln.v1.Harness for its fleet too: its console shows the fleet's
      // definitions and runs beside the campaigns (no node page: the fleet is many nodes).
      ControllerRoutes();
      Routes(/*node_page=*/false);
    } else {
      Routes(/*node_page=*/true);
    }
    SessionRoutes();
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    return absl::OkStatus();
  }

  std::string url() const override {
    return absl::StrCat(tls_ ? "https://" : "http://", host_, ":", port_);
  }

  void Stop() override {
    if (server_ != nullptr) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Prepare(grpc::ClientContext* context, const std::string& token) const {
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    if (!token.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
  }

  // The run of the same principal and definition created just before `run` ("" when none, or
  // when the listing fails).
  std::string PreviousRun(const v1::Run& run, const std::string& token) const {
    v1::ListRunsRequest request;
    request.set_definition(run.definition());
    request.set_principal(run.principal());
    request.set_exclude_reference_checks(true);
    request.set_limit(1000);
    bool found = false;
    do {
      grpc::ClientContext context;
      Prepare(&context, token);
      v1::ListRunsResponse page;
      if (!stub_->ListRuns(&context, request, &page).ok()) return "";
      for (const v1::RunSummary& r : page.runs()) {  // newest first
        if (found) return r.run_id();
        found = r.run_id() == run.run_id();
      }
      request.set_page_token(page.next_page_token());
    } while (!request.page_token().empty());
    return "";
  }

  std::string Viewer(const std::string& token) const {
    if (options_.access.tokens_file.empty()) return "local (operator)";
    return token.empty() ? "" : "logged in";
  }

  static void Headers(httplib::Response& res) {
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                   "form-action 'self'; frame-ancestors 'none'");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Cache-Control", "no-store");
  }

  void Html(httplib::Response& res, int status, const std::string& title, const std::string& nav,
            const std::string& body, const std::string& token) const {
    Headers(res);
    res.status = status;
    res.set_content(web::Page(title, nav, body, Viewer(token),
                              options_.controller ? web::Site::kController : web::Site::kHarness),
                    "text/html; charset=utf-8");
  }

  void Json(httplib::Response& res, int status, const std::string& json) const {
    Headers(res);
    res.status = status;
    res.set_content(json + "\n", "application/json");
  }

  // Answers a failed call: the login form for an unknown or missing token, else an error page.
  void Fail(const httplib::Request& req, httplib::Response& res, const grpc::Status& s,
            const std::string& nav, const std::string& token) const {
    const int status = HttpStatus(s.error_code());
    if (WantsJson(req)) {
      nlohmann::json error;
      error["error"]["code"] = CodeName(s.error_code());
      error["error"]["message"] = s.error_message();
      Json(res, status, error.dump());
      return;
    }
    if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      Html(res, status, "Log in", nav,
           web::LoginBody(token.empty() ? absl::StrCat("This ", Service(), " needs a token.")
                                        : absl::StrCat("The ", Service(),
                                                       " does not know that token.")),
           "");
      return;
    }
    Html(res, status, CodeName(s.error_code()), nav,
         web::ErrorBody(CodeName(s.error_code()), s.error_message()), token);
  }

  const char* Service() const { return options_.controller ? "kiln-controller" : "harness"; }

  // Answers one RPC: its error when `s` failed, else `message` as JSON when the request asks
  // for JSON, else the page `title` with the HTML `body` makes.
  void Reply(const httplib::Request& req, httplib::Response& res, const std::string& token,
             const grpc::Status& s, const google::protobuf::Message& message,
             const std::string& nav, const std::string& title,
             const std::function<std::string()>& body) const {
    if (!s.ok()) return Fail(req, res, s, nav, token);
    if (WantsJson(req)) return Json(res, 200, ToJson(message));
    Html(res, 200, title, nav, body(), token);
  }

  void Routes(bool node_page) {
    if (node_page) {
      server_->Get("/", [this](const httplib::Request& req, httplib::Response& res) {
        const std::string token = TokenOf(req);
        grpc::ClientContext context;
        Prepare(&context, token);
        v1::NodeInfo node;
        Reply(req, res, token, stub_->GetNodeInfo(&context, v1::GetNodeInfoRequest(), &node),
              node, "node", "Node", [&] { return web::NodeBody(node); });
      });
    }
    server_->Get("/definitions", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string token = TokenOf(req);
      grpc::ClientContext context;
      Prepare(&context, token);
      v1::ListDefinitionsResponse list;
      Reply(req, res, token, stub_->ListDefinitions(&context, v1::ListDefinitionsRequest(), &list),
            list, "definitions", "Definitions", [&] { return web::DefinitionsBody(list); });
    });
    server_->Get(R"(/definitions/([^/]+))", [this](const httplib::Request& req,
                                                   httplib::Response& res) {
      const std::string token = TokenOf(req);
      const std::string name = req.matches[1];
      v1::DefinitionDetail detail;
      {
        grpc::ClientContext context;
        Prepare(&context, token);
        v1::GetDefinitionRequest request;
        request.set_name(name);
        grpc::Status s = stub_->GetDefinition(&context, request, &detail);
        if (!s.ok()) return Fail(req, res, s, "definitions", token);
      }
      v1::Leaderboard board;
      {
        grpc::ClientContext context;
        Prepare(&context, token);
        v1::LeaderboardRequest request;
        request.set_definition(name);
        if (req.has_param("mode")) request.set_mode(req.get_param_value("mode"));
        if (req.has_param("rule")) request.set_rule(req.get_param_value("rule"));
        grpc::Status s = stub_->GetLeaderboard(&context, request, &board);
        if (!s.ok()) return Fail(req, res, s, "definitions", token);
      }
      if (WantsJson(req)) {
        return Json(res, 200,
                    absl::StrCat("{\"definition\":", ToJson(detail), ",\"leaderboard\":",
                                 ToJson(board), "}"));
      }
      Html(res, 200, name, "definitions", web::DefinitionBody(detail, board), token);
    });
    // The definition report (kiln report DEFINITION): fast_p curves and per-workload speedups of
    // every team's counted run, from every run of the definition the viewer may read.
    server_->Get(R"(/definitions/([^/]+)/report)", [this](const httplib::Request& req,
                                                          httplib::Response& res) {
      const std::string token = TokenOf(req);
      cli::DefinitionReportOptions options;
      options.definition = req.matches[1];
      options.mode = req.get_param_value("mode");
      if (req.get_param_value("rule") == "best") options.rule = cli::Rule::kBest;
      std::string baseline = req.has_param("baseline") ? req.get_param_value("baseline")
                                                       : std::string("reference");
      if (options.mode.empty()) {
        grpc::ClientContext context;
        Prepare(&context, token);
        v1::NodeInfo node;
        grpc::Status s = stub_->GetNodeInfo(&context, v1::GetNodeInfoRequest(), &node);
        if (!s.ok()) return Fail(req, res, s, "definitions", token);
        options.mode = node.default_mode();
      }
      if (absl::StartsWith(baseline, "solution:")) options.baselines.push_back(baseline);
      std::vector<v1::Run> runs;
      cli::SkippedRuns skipped;
      grpc::Status s = cli::FetchReportRuns(
          *stub_, [&](grpc::ClientContext* context) { Prepare(context, token); },
          options.definition, options.mode, &runs, &skipped);
      if (!s.ok()) return Fail(req, res, s, "definitions", token);
      absl::StatusOr<cli::DefinitionReport> report =
          cli::BuildDefinitionReport(runs, options, skipped);
      if (!report.ok()) {
        return Fail(req, res,
                    grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                 std::string(report.status().message())),
                    "definitions", token);
      }
      if (WantsJson(req)) return Json(res, 200, cli::DefinitionReportJson(*report, baseline).dump());
      Html(res, 200, absl::StrCat(options.definition, ": report"), "definitions",
           web::ReportBody(options.definition, cli::DefinitionReportSvg(*report, baseline),
                           cli::DefinitionReportText(*report, baseline)),
           token);
    });
    server_->Get("/runs", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string token = TokenOf(req);
      v1::ListRunsRequest request;
      int limit = kPageSize;
      if (req.has_param("limit") &&
          (!absl::SimpleAtoi(req.get_param_value("limit"), &limit) || limit < 1 || limit > 1000)) {
        return Fail(req, res,
                    grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                 "limit: a number of runs a page from 1 to 1000"),
                    "runs", token);
      }
      request.set_limit(limit);
      request.set_exclude_reference_checks(!req.has_param("all"));
      std::string query;
      auto keep = [&](const char* key) {
        if (!req.has_param(key)) return std::string();
        const std::string value = req.get_param_value(key);
        absl::StrAppend(&query, query.empty() ? "" : "&amp;", key, "=",
                        XmlEscape(web::UrlEncode(value)));
        return value;
      };
      request.set_definition(keep("definition"));
      request.set_principal(keep("principal"));
      if (const std::string status = keep("status"); !status.empty()) {
        v1::EvaluationStatus parsed;
        if (!v1::EvaluationStatus_Parse(status, &parsed)) {
          return Fail(req, res,
                      grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                   absl::StrCat("status: unknown status '", status,
                                                "' (PASSED, INCORRECT_NUMERICAL, REJECTED, ...)")),
                      "runs", token);
        }
        request.set_status(parsed);
      }
      if (req.has_param("all")) absl::StrAppend(&query, query.empty() ? "" : "&amp;", "all=1");
      if (req.has_param("limit")) {
        absl::StrAppend(&query, query.empty() ? "" : "&amp;", "limit=", limit);
      }
      request.set_page_token(req.get_param_value("page_token"));
      grpc::ClientContext context;
      Prepare(&context, token);
      v1::ListRunsResponse runs;
      Reply(req, res, token, stub_->ListRuns(&context, request, &runs), runs, "runs", "Runs",
            [&] { return web::RunsBody(runs, query); });
    });
    server_->Get(R"(/runs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string token = TokenOf(req);
      grpc::ClientContext context;
      Prepare(&context, token);
      v1::GetRunRequest request;
      request.set_run_id(req.matches[1]);
      request.set_include_sources(true);
      v1::Run run;
      grpc::Status s = stub_->GetRun(&context, request, &run);
      if (!s.ok()) return Fail(req, res, s, "runs", token);
      if (WantsJson(req)) return Json(res, 200, ToJson(run));
      // The raw timing samples the harness archived for the run's workloads.
      web::RunSamples samples;
      for (const v1::ArtifactRef& a : run.artifacts()) {
        if (a.kind() != "samples") continue;
        grpc::ClientContext artifact_context;
        Prepare(&artifact_context, token);
        v1::GetArtifactRequest artifact_request;
        artifact_request.set_sha256(a.sha256());
        v1::Artifact artifact;
        if (stub_->GetArtifact(&artifact_context, artifact_request, &artifact).ok()) {
          samples[a.name()] = ParseSamplesArtifact(artifact.content());
        }
      }
      std::string body = web::RunBody(run, samples);
      // The same principal's previous run of the definition, and what changed in the sources.
      std::string previous = PreviousRun(run, token);
      std::string diff;
      if (!previous.empty()) {
        grpc::ClientContext before_context;
        Prepare(&before_context, token);
        v1::GetRunRequest before_request;
        before_request.set_run_id(previous);
        before_request.set_include_sources(true);
        v1::Run before;
        if (stub_->GetRun(&before_context, before_request, &before).ok()) {
          diff = web::UnifiedSourceDiff(before.solution(), run.solution());
        } else {
          previous.clear();
        }
      }
      absl::StrAppend(&body, web::DiffSection(previous, diff));
      Html(res, 200, absl::StrCat("Run ", run.run_id()), "runs", body, token);
    });
    // One archived file of a run (worker log, compiler log, samples, ...), as `kiln runs
    // artifact RUN KIND/NAME` gives it: only to a viewer who may read the run.
    server_->Get(R"(/runs/([^/]+)/artifacts/([^/]+)/([^/]+))", [this](const httplib::Request& req,
                                                                       httplib::Response& res) {
      const std::string token = TokenOf(req);
      v1::Run run;
      {
        grpc::ClientContext context;
        Prepare(&context, token);
        v1::GetRunRequest request;
        request.set_run_id(req.matches[1]);
        grpc::Status s = stub_->GetRun(&context, request, &run);
        if (!s.ok()) return Fail(req, res, s, "runs", token);
      }
      const std::string kind = req.matches[2], name = req.matches[3];
      for (const v1::ArtifactRef& a : run.artifacts()) {
        if (a.kind() != kind || a.name() != name) continue;
        grpc::ClientContext context;
        Prepare(&context, token);
        v1::GetArtifactRequest request;
        request.set_sha256(a.sha256());
        v1::Artifact artifact;
        grpc::Status s = stub_->GetArtifact(&context, request, &artifact);
        if (!s.ok()) return Fail(req, res, s, "runs", token);
        const bool text = kind != "binary";
        res.set_header("X-Content-Type-Options", "nosniff");
        if (!text) {
          res.set_header("Content-Disposition", absl::StrCat("attachment; filename=\"", name, "\""));
        }
        res.set_content(artifact.content(), text ? "text/plain; charset=utf-8"
                                                 : "application/octet-stream");
        return;
      }
      return Fail(req, res,
                  grpc::Status(grpc::StatusCode::NOT_FOUND,
                               absl::StrCat("run ", run.run_id(), " has no artifact ", kind, "/",
                                            name)),
                  "runs", token);
    });
  }

  // /login (the form, and its POST setting the cookie) and /logout.
  void SessionRoutes() {
    server_->Get("/login", [this](const httplib::Request&, httplib::Response& res) {
      Html(res, 200, "Log in", "", web::LoginBody(""), "");
    });
    server_->Post("/login", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string token = req.get_param_value("token");
      if (!PlausibleToken(token)) {
        return Html(res, 400, "Log in", "", web::LoginBody("That is not a token."), "");
      }
      // Known to the service? GetNodeInfo (ListCampaigns) answers any principal.
      grpc::Status s = CheckToken(token);
      if (!s.ok()) return Fail(req, res, s, "", token);
      Headers(res);
      res.set_header("Set-Cookie", absl::StrCat(kCookie, "=", token,
                                                "; Path=/; HttpOnly; SameSite=Strict",
                                                tls_ ? "; Secure" : ""));
      res.set_redirect("/", 303);
    });
    server_->Get("/logout", [this](const httplib::Request&, httplib::Response& res) {
      Headers(res);
      res.set_header("Set-Cookie",
                     absl::StrCat(kCookie, "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"));
      res.set_redirect("/login", 303);
    });
  }

  grpc::Status CheckToken(const std::string& token) const {
    grpc::ClientContext context;
    Prepare(&context, token);
    if (options_.controller) {
      v1::ListCampaignsRequest request;
      request.set_limit(1);
      v1::ListCampaignsResponse response;
      return controller_->ListCampaigns(&context, request, &response);
    }
    v1::NodeInfo node;
    return stub_->GetNodeInfo(&context, v1::GetNodeInfoRequest(), &node);
  }

  void ControllerRoutes() {
    server_->Get("/", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string token = TokenOf(req);
      grpc::ClientContext context;
      Prepare(&context, token);
      v1::ListCampaignsRequest request;
      request.set_limit(200);
      v1::ListCampaignsResponse list;
      Reply(req, res, token, controller_->ListCampaigns(&context, request, &list), list,
            "campaigns", "Campaigns", [&] { return web::CampaignsBody(list); });
    });
    server_->Get(R"(/campaigns/([^/]+))", [this](const httplib::Request& req,
                                                 httplib::Response& res) {
      const std::string token = TokenOf(req);
      grpc::ClientContext context;
      Prepare(&context, token);
      v1::GetCampaignRequest request;
      request.set_campaign_id(req.matches[1]);
      v1::Campaign campaign;
      Reply(req, res, token, controller_->GetCampaign(&context, request, &campaign), campaign,
            "campaigns", absl::StrCat("Campaign ", request.campaign_id()),
            [&] { return web::CampaignBody(campaign); });
    });
  }

  WebConsoleOptions options_;
  std::unique_ptr<v1::Harness::Stub> stub_;
  std::unique_ptr<v1::Controller::Stub> controller_;
  bool tls_ = false;
  std::unique_ptr<httplib::Server> server_;
  std::string host_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<WebConsole>> WebConsole::Start(
    const WebConsoleOptions& options, std::shared_ptr<grpc::Channel> channel) {
  auto console = std::make_unique<WebConsoleImpl>(options, std::move(channel));
  if (absl::Status s = console->Bind(); !s.ok()) return s;
  return std::unique_ptr<WebConsole>(std::move(console));
}

}  // namespace kiln
