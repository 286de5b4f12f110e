// kiln campaign start | list | show | watch | cancel | export: the CLI side of kiln-controller.
// The campaign file is validated here first (errors name the field), then sent with every file
// it names, so the controller need not share a file system with the caller.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/campaign_output.h"
#include "client/commands.h"
#include "client/connection.h"
#include "controller/spec/campaign_spec.h"
#include "kiln/v1/controller.grpc.pb.h"

namespace kiln::cli {

namespace {

std::string ControllerAddress(const Invocation& inv) {
  if (inv.args.Has("controller")) return inv.args.Get("controller");
  if (!inv.controller.empty()) return inv.controller;
  const char* env = std::getenv("KILN_CONTROLLER");
  if (env != nullptr && *env != '\0') return env;
  return kDefaultController;
}

// The connection to kiln-controller: --controller, and --token (else $KILN_CONTROLLER_TOKEN) and
// the TLS flags as for a harness.
struct ControllerLink {
  explicit ControllerLink(const Invocation& inv) : address(ControllerAddress(inv)) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    args.SetMaxSendMessageSize(64 << 20);
    if (!inv.connection.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(inv.connection.tls_server_name);
    }
    channel = grpc::CreateCustomChannel(address, ChannelCredentialsFor(inv.connection), args);
    stub = v1::Controller::NewStub(channel);
    const auto& given = inv.connection_flags_given;
    if (std::find(given.begin(), given.end(), "token") != given.end()) {
      token = inv.connection.token;
    } else if (const char* env = std::getenv("KILN_CONTROLLER_TOKEN"); env != nullptr) {
      token = env;
    }
  }
  // The bearer token, on every call.
  void Prepare(grpc::ClientContext* context) const {
    if (!token.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
  }
  int Fail(const grpc::Status& s, Console& console) const {
    if (s.error_code() == grpc::StatusCode::UNAVAILABLE &&
        channel->GetState(false) != GRPC_CHANNEL_READY) {
      console.err << "kiln: cannot reach kiln-controller at " << address << ": "
                  << s.error_message() << "\n";
    } else {
      console.err << "kiln: " << StatusCodeName(s.error_code()) << ": " << s.error_message()
                  << "\n";
    }
    return kExitUsage;
  }
  std::string address;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Controller::Stub> stub;
  std::string token;
};

// Streams the campaign's events; `progress` prints one status line per event on console.err,
// else every event goes to console.out. Returns the final call status.
grpc::Status Follow(ControllerLink& link, const std::string& id, bool progress, Console& console) {
  grpc::ClientContext context;
  link.Prepare(&context);
  v1::WatchCampaignRequest request;
  request.set_campaign_id(id);
  auto reader = link.stub->WatchCampaign(&context, request);
  v1::CampaignEvent event;
  while (reader->Read(&event)) {
    if (progress) {
      console.err << "kiln: " << ProgressLine(event) << "\n" << std::flush;
    } else {
      console.out << EventLine(event) << "\n" << std::flush;
    }
  }
  return reader->Finish();
}

int CampaignExit(const v1::Campaign& c) {
  return c.status() == "completed" ? kExitOk : kExitFailed;
}

}  // namespace

int RunCampaignStart(const Invocation& inv, Console& console) {
  const std::string path = inv.args.positionals[0];
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    console.err << "kiln campaign start: cannot read " << path << "\n";
    return kExitUsage;
  }
  std::stringstream yaml;
  yaml << in.rdbuf();
  auto [dir, name] = controller::SplitPath(path);
  controller::DiskCampaignFiles files(dir);
  absl::StatusOr<controller::CampaignSpec> spec = controller::ParseCampaignSpec(yaml.str(), files);
  if (!spec.ok()) {
    console.err << "kiln campaign start: " << path << ": " << spec.status().message() << "\n";
    return kExitUsage;
  }
  v1::StartCampaignRequest request;
  request.set_spec_yaml(yaml.str());
  request.set_spec_name(name);
  if (inv.args.Has("owner")) request.set_owner(inv.args.Get("owner"));
  for (const auto& [file, content] : files.read()) {
    v1::CampaignFile* f = request.add_files();
    f->set_path(file);
    f->set_content(content);
  }
  ControllerLink link(inv);
  grpc::ClientContext context;
  link.Prepare(&context);
  Connection::SetDeadline(&context, kDefaultCallTimeoutS);
  v1::Campaign campaign;
  grpc::Status status = link.stub->StartCampaign(&context, request, &campaign);
  if (!status.ok()) return link.Fail(status, console);
  console.err << "kiln: campaign " << campaign.campaign_id() << " started (" << campaign.name()
              << " on " << campaign.definition() << ")\n";
  if (!inv.args.Has("wait")) {
    if (inv.args.Has("json")) {
      console.out << Dump(CampaignJson(campaign));
    } else {
      console.out << campaign.campaign_id() << "\n";
    }
    return kExitOk;
  }
  status = Follow(link, campaign.campaign_id(), true, console);
  if (!status.ok()) return link.Fail(status, console);
  grpc::ClientContext get_context;
  link.Prepare(&get_context);
  Connection::SetDeadline(&get_context, kDefaultCallTimeoutS);
  v1::GetCampaignRequest get;
  get.set_campaign_id(campaign.campaign_id());
  status = link.stub->GetCampaign(&get_context, get, &campaign);
  if (!status.ok()) return link.Fail(status, console);
  console.out << (inv.args.Has("json") ? Dump(WaitJson(campaign)) : CampaignText(campaign));
  return CampaignExit(campaign);
}

int RunCampaignList(const Invocation& inv, Console& console) {
  ControllerLink link(inv);
  grpc::ClientContext context;
  link.Prepare(&context);
  Connection::SetDeadline(&context, kDefaultCallTimeoutS);
  v1::ListCampaignsRequest request;
  absl::StatusOr<int> limit = IntFlag(inv, "limit", 50);
  if (!limit.ok()) {
    console.err << limit.status().message() << "\n";
    return kExitUsage;
  }
  request.set_limit(*limit);
  v1::ListCampaignsResponse response;
  grpc::Status status = link.stub->ListCampaigns(&context, request, &response);
  if (!status.ok()) return link.Fail(status, console);
  if (inv.args.Has("json")) {
    Json list = Json::array();
    for (const v1::Campaign& c : response.campaigns()) list.push_back(CampaignJson(c));
    console.out << Dump(list);
  } else {
    console.out << CampaignTable(response);
  }
  return kExitOk;
}

int RunCampaignShow(const Invocation& inv, Console& console) {
  ControllerLink link(inv);
  grpc::ClientContext context;
  link.Prepare(&context);
  Connection::SetDeadline(&context, kDefaultCallTimeoutS);
  v1::GetCampaignRequest request;
  request.set_campaign_id(inv.args.positionals[0]);
  v1::Campaign campaign;
  grpc::Status status = link.stub->GetCampaign(&context, request, &campaign);
  if (!status.ok()) return link.Fail(status, console);
  console.out << (inv.args.Has("json") ? Dump(CampaignJson(campaign)) : CampaignText(campaign));
  return kExitOk;
}

int RunCampaignWatch(const Invocation& inv, Console& console) {
  ControllerLink link(inv);
  grpc::Status status = Follow(link, inv.args.positionals[0], false, console);
  if (!status.ok()) return link.Fail(status, console);
  return kExitOk;
}

int RunCampaignCancel(const Invocation& inv, Console& console) {
  ControllerLink link(inv);
  grpc::ClientContext context;
  link.Prepare(&context);
  Connection::SetDeadline(&context, 120);
  v1::CancelCampaignRequest request;
  request.set_campaign_id(inv.args.positionals[0]);
  v1::Campaign campaign;
  grpc::Status status = link.stub->CancelCampaign(&context, request, &campaign);
  if (!status.ok()) return link.Fail(status, console);
  console.out << "campaign " << campaign.campaign_id() << ": " << campaign.status() << "\n";
  return kExitOk;
}

int RunCampaignExport(const Invocation& inv, Console& console) {
  ControllerLink link(inv);
  grpc::ClientContext context;
  link.Prepare(&context);
  Connection::SetDeadline(&context, kDefaultCallTimeoutS);
  v1::ExportCampaignRequest request;
  request.set_campaign_id(inv.args.positionals[0]);
  v1::ExportCampaignResponse response;
  grpc::Status status = link.stub->ExportCampaign(&context, request, &response);
  if (!status.ok()) return link.Fail(status, console);
  if (inv.args.Has("output")) {
    std::ofstream out(inv.args.Get("output"), std::ios::binary | std::ios::trunc);
    out << response.solution_json() << "\n";
    if (!out) {
      console.err << "kiln campaign export: cannot write " << inv.args.Get("output") << "\n";
      return kExitUsage;
    }
    return kExitOk;
  }
  console.out << response.solution_json() << "\n";
  return kExitOk;
}

}  // namespace kiln::cli
