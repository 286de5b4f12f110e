// kiln defs import DIR: register a flashinfer-bench dataset folder (dataset_import.h reads it),
// or with --format kernelbench a KernelBench folder (kernelbench_import.h reads it).
//
// For every definition that validated: its workloads' blobs go to the harness (PutBlob, under
// the node's blob root at the path the workload names, so the workers find them as
// flashinfer-bench finds them under the dataset folder), then the definition with its
// importable workloads (PutDefinition). A definition with any error is not registered; the
// others still are. Then the valid solutions of the definitions it registered go into the
// harness's solution registry (PutSolution, solution_registration.h), as baselines that runs
// name "solution:NAME"; none is evaluated here. A dry run changes nothing on the harness.
//
// Exit status: 0 when every definition was registered (workloads left out for a missing blob
// are reported, not failures), 1 when a definition, workload line or solution failed, or a
// solution could not be registered (or, with --strict, anything was left out), 2 for usage and
// connection errors.
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/import/dataset_import.h"
#include "client/import/kernelbench_import.h"
#include "client/import/solution_registration.h"
#include "harness/common/sha256.h"
#include "harness/model/validate.h"
#include "report/json_output.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

constexpr size_t kBlobChunkBytes = 1 << 20;

// What happened to one definition on the harness.
struct Registration {
  std::string status;  // "registered" | "validated" (dry run) | "builtin" | "failed"
  int workloads_registered = 0;
  int blobs_uploaded = 0;
  int blobs_present = 0;  // already stored with the same content
  std::string reference_check_run_id;
  std::string cannot_evaluate;  // why no run of it can be evaluated on the node ("" if one can)
};

// Streams one blob to the harness. A local read error is returned as INVALID_ARGUMENT; a call
// error as the call's status.
grpc::Status UploadBlob(Connection& connection, const DatasetBlob& blob,
                        v1::PutBlobResponse* response) {
  int64_t size = 0;
  absl::StatusOr<std::string> sha256 = Sha256File(blob.local_path, &size);
  if (!sha256.ok()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        std::string(sha256.status().message()));
  }
  grpc::ClientContext context;
  // A minute per GiB on top of the usual deadline.
  connection.Prepare(&context, kDefaultCallTimeoutS + 60.0 * static_cast<double>(size) / (1 << 30));
  std::unique_ptr<grpc::ClientWriter<v1::PutBlobChunk>> writer =
      connection.stub().PutBlob(&context, response);
  std::ifstream in(blob.local_path, std::ios::binary);
  v1::PutBlobChunk chunk;
  chunk.set_path(blob.path);
  chunk.set_size(size);
  chunk.set_sha256(*sha256);
  std::string buf(kBlobChunkBytes, '\0');
  bool first = true;
  while (in || first) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0 && !first) break;
    chunk.set_data(buf.data(), n);
    if (!writer->Write(chunk)) break;  // the server ended the call: Finish says why
    chunk.Clear();
    first = false;
  }
  writer->WritesDone();
  return writer->Finish();
}

std::string Quoted(const std::string& s) {
  for (char c : s) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '/';
    if (!plain) {
      std::string out = "'";
      for (char d : s) out += d == '\'' ? std::string("'\\''") : std::string(1, d);
      return out + "'";
    }
  }
  return s;
}

std::string SubmitCommand(const DatasetScan& scan, const SolutionImport& s) {
  return absl::StrCat("kiln submit --definition ", Quoted(s.definition), " --solution ",
                      Quoted(absl::StrCat(scan.dir, "/", s.file)));
}

std::string LeftOutSummary(const DefinitionImport& d) {
  std::map<std::string, int> reasons;
  for (const LeftOutWorkload& w : d.left_out) ++reasons[w.reason];
  std::string out;
  for (const auto& [reason, n] : reasons) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", n, " ", reason);
  }
  return out;
}

// One line on stderr per definition.
void Progress(Console& console, size_t index, size_t count, const DefinitionImport& d,
              const Registration& r) {
  console.err << "kiln: [" << index + 1 << "/" << count << "] " << d.name << ": ";
  if (r.status == "failed") {
    console.err << "FAILED, not registered (" << d.errors.size() << " error"
                << (d.errors.size() == 1 ? "" : "s") << ")";
  } else if (r.status == "builtin") {
    console.err << "not registered: a built-in definition of the harness has this name";
  } else {
    const int n = r.status == "validated" ? static_cast<int>(d.workloads.size())
                                          : r.workloads_registered;
    console.err << (r.status == "validated" ? "valid, " : "registered, ") << n << " of "
                << d.workloads_in_files << " workloads";
    if (!d.left_out.empty()) console.err << " (left out: " << LeftOutSummary(d) << ")";
    if (r.blobs_uploaded + r.blobs_present > 0) {
      console.err << ", " << r.blobs_uploaded << " blobs uploaded";
      if (r.blobs_present > 0) console.err << " (" << r.blobs_present << " already there)";
    }
  }
  console.err << "\n";
}

// Uploads the blobs of `d` and registers it. Returns a fatal call status to stop the import,
// else OK (a failure of this definition alone is recorded in `d` and `r`).
grpc::Status Register(Connection& connection, DefinitionImport& d, Registration& r,
                      std::set<std::string>& uploaded) {
  for (const DatasetBlob& blob : d.blobs) {
    if (uploaded.count(blob.local_path) > 0) {  // by an earlier definition of this import
      ++r.blobs_present;
      continue;
    }
    v1::PutBlobResponse response;
    grpc::Status status = UploadBlob(connection, blob, &response);
    if (!status.ok()) {
      if (IsFatal(status.error_code())) return status;
      d.errors.push_back(absl::StrCat("uploading blob ", blob.path, ": ",
                                      StatusCodeName(status.error_code()), ": ",
                                      status.error_message()));
      r.status = "failed";
      return grpc::Status::OK;
    }
    (response.already_present() ? r.blobs_present : r.blobs_uploaded)++;
    uploaded.insert(blob.local_path);
  }
  v1::PutDefinitionRequest request;
  *request.mutable_definition() = d.definition;
  // A dataset is registered whole, also on a node that cannot compute some references (no
  // torch); those are listed with the reason.
  request.set_allow_unevaluable(true);
  for (const v1::Workload& w : d.workloads) *request.add_workloads() = w;
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::PutDefinitionResponse response;
  grpc::Status status = connection.stub().PutDefinition(&context, request, &response);
  if (!status.ok()) {
    if (IsFatal(status.error_code())) return status;
    d.errors.push_back(absl::StrCat(d.file, ": registering: ", StatusCodeName(status.error_code()),
                                    ": ", status.error_message()));
    r.status = "failed";
    return grpc::Status::OK;
  }
  r.status = "registered";
  r.workloads_registered = response.workload_count();
  r.reference_check_run_id = response.reference_check_run_id();
  r.cannot_evaluate = response.cannot_evaluate();
  return grpc::Status::OK;
}

// Whether a definition's workloads count as importable: it was (or, in a dry run, would be)
// registered; not a built-in name or a failure.
bool Importable(const Registration& r) {
  return r.status == "registered" || r.status == "validated";
}

struct Totals {
  int registered = 0, validated = 0, builtin = 0, failed = 0;
  int workloads_in_files = 0, workloads_importable = 0, workloads_registered = 0;
  int left_out = 0;
  int solutions_valid = 0, solutions_unsupported = 0, solutions_invalid = 0;
  int solutions_registered = 0, solutions_unchanged = 0, solutions_to_register = 0;
  int solutions_failed = 0;
};

Totals Count(const DatasetScan& scan, const std::vector<Registration>& regs,
             const std::vector<SolutionRegistration>& solution_regs) {
  Totals t;
  for (size_t i = 0; i < scan.definitions.size(); ++i) {
    const DefinitionImport& d = scan.definitions[i];
    const Registration& r = regs[i];
    if (r.status == "registered") ++t.registered;
    if (r.status == "validated") ++t.validated;
    if (r.status == "builtin") ++t.builtin;
    if (r.status == "failed") ++t.failed;
    t.workloads_in_files += d.workloads_in_files;
    if (Importable(r)) {
      t.workloads_importable += static_cast<int>(d.workloads.size());
      t.left_out += static_cast<int>(d.left_out.size());
    }
    t.workloads_registered += r.workloads_registered;
  }
  for (const SolutionImport& s : scan.solutions) {
    if (s.status == "valid") ++t.solutions_valid;
    if (s.status == "unsupported") ++t.solutions_unsupported;
    if (s.status == "invalid") ++t.solutions_invalid;
  }
  for (const SolutionRegistration& r : solution_regs) {
    if (r.status == "registered") ++t.solutions_registered;
    if (r.status == "unchanged") ++t.solutions_unchanged;
    if (r.status == "to register") ++t.solutions_to_register;
    if (r.status == "failed") ++t.solutions_failed;
  }
  return t;
}

std::string SummaryLine(const DatasetScan& scan, const Totals& t, bool dry_run) {
  std::string out = absl::StrCat(scan.definitions.size(), " definitions: ");
  if (dry_run) {
    absl::StrAppend(&out, t.validated, " valid (dry run, nothing registered)");
  } else {
    absl::StrAppend(&out, t.registered, " registered");
  }
  if (t.builtin > 0) absl::StrAppend(&out, ", ", t.builtin, " not registered (built in)");
  absl::StrAppend(&out, ", ", t.failed, " failed; ", t.workloads_in_files, " workloads in files, ",
                  dry_run ? t.workloads_importable : t.workloads_registered,
                  dry_run ? " importable" : " registered", ", ", t.left_out,
                  " left out (blob missing or not uploadable)");
  absl::StrAppend(&out, "; ", scan.solutions.size(), " solutions (", t.solutions_valid, " valid");
  if (t.solutions_unsupported > 0) absl::StrAppend(&out, ", ", t.solutions_unsupported,
                                                   " in languages kiln does not run");
  absl::StrAppend(&out, ", ", t.solutions_invalid, " invalid; ");
  if (dry_run) {
    absl::StrAppend(&out, t.solutions_to_register, " to register)");
  } else {
    absl::StrAppend(&out, t.solutions_registered, " registered, ", t.solutions_unchanged,
                    " already registered, ", t.solutions_failed, " failed to register)");
  }
  if (!scan.errors.empty()) absl::StrAppend(&out, "; ", scan.errors.size(), " other errors");
  return out;
}

void PrintText(const DatasetScan& scan, const std::vector<Registration>& regs,
               const std::vector<SolutionRegistration>& solution_regs, bool dry_run,
               Console& console) {
  Table table({{"definition"},
               {dry_run ? "importable" : "registered", Align::kRight},
               {"in files", Align::kRight},
               {"left out", Align::kRight},
               {"blobs", Align::kRight},
               {"status"}});
  for (size_t i = 0; i < scan.definitions.size(); ++i) {
    const DefinitionImport& d = scan.definitions[i];
    const Registration& r = regs[i];
    const bool ok = r.status == "registered" || r.status == "validated";
    const int n = dry_run ? static_cast<int>(d.workloads.size()) : r.workloads_registered;
    table.AddRow({d.name, ok ? absl::StrCat(n) : kAbsent, absl::StrCat(d.workloads_in_files),
                  ok ? absl::StrCat(d.left_out.size()) : kAbsent,
                  ok ? absl::StrCat(d.blobs.size()) : kAbsent,
                  r.status == "failed"    ? "FAILED"
                  : r.status == "builtin" ? "built in, not registered"
                                          : r.status});
  }
  std::string out = table.Render();

  std::string left_out;
  for (size_t i = 0; i < scan.definitions.size(); ++i) {
    const DefinitionImport& d = scan.definitions[i];
    if (d.left_out.empty() || regs[i].status == "failed" || regs[i].status == "builtin") continue;
    absl::StrAppend(&left_out, "  ", d.name, ": ", d.left_out.size(), " of ",
                    d.workloads_in_files, " workloads\n");
    for (const LeftOutWorkload& w : d.left_out) {
      absl::StrAppend(&left_out, "    ", w.uuid, "  ", w.reason, ": ", w.path, "  (", w.where,
                      ")\n");
    }
  }
  if (!left_out.empty()) {
    absl::StrAppend(&out, "\nWARNING: workloads left out, not registered (they cannot be "
                          "evaluated; their blobs are not under ",
                    scan.dir, "):\n", left_out);
  }

  std::string unevaluable;
  for (size_t i = 0; i < scan.definitions.size(); ++i) {
    if (!regs[i].cannot_evaluate.empty()) {
      absl::StrAppend(&unevaluable, "  ", scan.definitions[i].name, ": ",
                      regs[i].cannot_evaluate, "\n");
    }
  }
  if (!unevaluable.empty()) {
    absl::StrAppend(&out, "\nWARNING: registered, but this node cannot evaluate them (runs are "
                          "refused until a backend here can compute their reference):\n",
                    unevaluable);
  }

  std::string builtin;
  for (size_t i = 0; i < scan.definitions.size(); ++i) {
    if (regs[i].status == "builtin") absl::StrAppend(&builtin, "  ", scan.definitions[i].name,
                                                     " (", scan.definitions[i].file, ")\n");
  }
  if (!builtin.empty()) {
    absl::StrAppend(&out, "\nWARNING: not registered, the harness has a built-in definition of "
                          "the same name (evaluations use the built-in one and its workloads):\n",
                    builtin);
  }

  std::string errors;
  for (size_t i = 0; i < scan.definitions.size(); ++i) {
    const DefinitionImport& d = scan.definitions[i];
    if (d.errors.empty()) continue;
    absl::StrAppend(&errors, "  ", d.name, " (", d.file, "), not registered:\n");
    for (const std::string& e : d.errors) absl::StrAppend(&errors, "    ", e, "\n");
  }
  for (const std::string& e : scan.errors) absl::StrAppend(&errors, "  ", e, "\n");
  if (!errors.empty()) absl::StrAppend(&out, "\nERRORS:\n", errors);

  if (!scan.solutions.empty()) {
    Table solutions({{"solution"}, {"definition"}, {"language"}, {"status"}, {"registry"}});
    std::string commands, problems, unregistered;
    for (size_t i = 0; i < scan.solutions.size(); ++i) {
      const SolutionImport& s = scan.solutions[i];
      const SolutionRegistration& r = solution_regs[i];
      solutions.AddRow(
          {s.name.empty() ? s.file : s.name, s.definition, s.language, s.status, r.status});
      if (s.status == "valid") {
        absl::StrAppend(&commands, "  ", SubmitCommand(scan, s), "\n");
        if (!r.error.empty()) absl::StrAppend(&unregistered, "  ", r.error, "\n");
      } else {
        absl::StrAppend(&problems, "  ", s.error, "\n");
      }
    }
    absl::StrAppend(&out, "\nsolutions (registered as baselines, not evaluated):\n",
                    solutions.Render());
    if (!commands.empty()) {
      absl::StrAppend(&out, "evaluate with:\n", commands,
                      "or time one beside a submission: kiln submit ... --baseline "
                      "solution:NAME\n");
    }
    if (!unregistered.empty()) absl::StrAppend(&out, "not registered:\n", unregistered);
    if (!problems.empty()) absl::StrAppend(&out, "not submittable:\n", problems);
  }
  absl::StrAppend(&out, "\n", SummaryLine(scan, Count(scan, regs, solution_regs), dry_run), "\n");
  console.out << out;
}

void PrintJson(const DatasetScan& scan, const std::vector<Registration>& regs,
               const std::vector<SolutionRegistration>& solution_regs, bool dry_run,
               Console& console) {
  Json defs = Json::array();
  for (size_t i = 0; i < scan.definitions.size(); ++i) {
    const DefinitionImport& d = scan.definitions[i];
    const Registration& r = regs[i];
    Json left_out = Json::array();
    for (const LeftOutWorkload& w : d.left_out) {
      left_out.push_back(
          {{"uuid", w.uuid}, {"where", w.where}, {"path", w.path}, {"reason", w.reason}});
    }
    Json errors = Json::array();
    for (const std::string& e : d.errors) errors.push_back(e);
    Json j = {{"name", d.name},
              {"file", d.file},
              {"status", r.status},
              {"workloads_in_files", d.workloads_in_files},
              {"workloads_importable", Importable(r) ? d.workloads.size() : 0},
              {"workloads_registered", r.workloads_registered},
              {"left_out", std::move(left_out)},
              {"blobs", d.blobs.size()},
              {"blobs_uploaded", r.blobs_uploaded},
              {"blobs_already_present", r.blobs_present},
              {"errors", std::move(errors)}};
    if (!r.reference_check_run_id.empty()) {
      j["reference_check_run_id"] = r.reference_check_run_id;
    }
    j["cannot_evaluate"] = r.cannot_evaluate;
    defs.push_back(std::move(j));
  }
  Json solutions = Json::array();
  for (size_t i = 0; i < scan.solutions.size(); ++i) {
    const SolutionImport& s = scan.solutions[i];
    Json j = {{"file", s.file},
              {"name", s.name},
              {"definition", s.definition},
              {"language", s.language},
              {"author", s.author},
              {"status", s.status},
              {"registration", solution_regs[i].status}};
    if (!s.error.empty()) j["error"] = s.error;
    if (!solution_regs[i].error.empty()) j["registration_error"] = solution_regs[i].error;
    if (s.status == "valid") j["submit_command"] = SubmitCommand(scan, s);
    solutions.push_back(std::move(j));
  }
  Json errors = Json::array();
  for (const std::string& e : scan.errors) errors.push_back(e);
  const Totals t = Count(scan, regs, solution_regs);
  Json summary = {{"definitions", scan.definitions.size()},
                  {"registered", t.registered},
                  {"validated", t.validated},
                  {"builtin", t.builtin},
                  {"failed", t.failed},
                  {"workloads_in_files", t.workloads_in_files},
                  {"workloads_importable", t.workloads_importable},
                  {"workloads_registered", t.workloads_registered},
                  {"workloads_left_out", t.left_out},
                  {"solutions", scan.solutions.size()},
                  {"solutions_valid", t.solutions_valid},
                  {"solutions_unsupported", t.solutions_unsupported},
                  {"solutions_invalid", t.solutions_invalid},
                  {"solutions_registered", t.solutions_registered},
                  {"solutions_already_registered", t.solutions_unchanged},
                  {"solutions_to_register", t.solutions_to_register},
                  {"solutions_registration_failed", t.solutions_failed},
                  {"errors", scan.errors.size()}};
  Json out = {{"dataset", scan.dir},          {"dry_run", dry_run},
              {"definitions", std::move(defs)}, {"solutions", std::move(solutions)},
              {"errors", std::move(errors)},    {"summary", std::move(summary)}};
  console.out << Dump(out);
}

}  // namespace

int RunDefsImport(const Invocation& inv, Console& console) {
  const std::vector<std::string> selected = inv.args.GetAll("definition");
  const std::set<std::string> only(selected.begin(), selected.end());
  const bool dry_run = inv.args.Has("dry-run");
  int64_t max_tensor_bytes = Limits{}.max_workload_bytes;
  if (inv.args.Has("max-tensor-bytes")) {
    if (!dry_run) {
      console.err << "kiln: defs import: --max-tensor-bytes is for --dry-run (the harness's own "
                     "limit applies to a real import)\n";
      return kExitUsage;
    }
    if (!absl::SimpleAtoi(inv.args.Get("max-tensor-bytes"), &max_tensor_bytes) ||
        max_tensor_bytes <= 0) {
      console.err << "kiln: defs import: --max-tensor-bytes: expected a positive integer, got '"
                  << inv.args.Get("max-tensor-bytes") << "'\n";
      return kExitUsage;
    }
  }
  const std::string format = inv.args.Get("format", "flashinfer");
  absl::StatusOr<DatasetScan> scanned;
  if (format == "kernelbench") {
    KernelBenchScanOptions options;
    options.dir = inv.args.positionals[0];
    options.only = only;
    options.python = inv.args.Get("python", "python3");
    for (const std::string& level : inv.args.GetAll("level")) {
      int n = 0;
      if (!absl::SimpleAtoi(level, &n) || n < 1) {
        console.err << "kiln: --level: expected a level number (1, 2, 3), got '" << level
                    << "'\n";
        return kExitUsage;
      }
      options.levels.push_back(n);
    }
    scanned = ScanKernelBench(options);
  } else if (format != "flashinfer") {
    console.err << "kiln: --format: expected flashinfer or kernelbench, got '" << format << "'\n";
    return kExitUsage;
  } else if (inv.args.Has("level") || inv.args.Has("python")) {
    console.err << "kiln: --" << (inv.args.Has("level") ? "level" : "python")
                << " is for --format kernelbench\n";
    return kExitUsage;
  } else {
    scanned = ScanDataset(inv.args.positionals[0], only);
  }
  if (!scanned.ok()) {
    console.err << "kiln: " << scanned.status().message() << "\n";
    return kExitUsage;
  }
  DatasetScan& scan = *scanned;
  std::vector<Registration> regs(scan.definitions.size());

  std::optional<Connection> connection;
  std::set<std::string> builtin;
  std::set<std::string> uploaded;  // local paths of the blobs this import has sent
  if (!dry_run) {
    connection.emplace(inv);
    grpc::ClientContext context;
    connection->Prepare(&context, kDefaultCallTimeoutS);
    v1::ListDefinitionsResponse listed;
    grpc::Status status =
        connection->stub().ListDefinitions(&context, v1::ListDefinitionsRequest(), &listed);
    if (!status.ok()) return connection->Fail(status, console);
    for (const v1::DefinitionSummary& d : listed.definitions()) {
      if (d.builtin()) builtin.insert(d.name());
    }
  }
  for (size_t i = 0; i < scan.definitions.size(); ++i) {
    DefinitionImport& d = scan.definitions[i];
    Registration& r = regs[i];
    if (!d.errors.empty()) {
      r.status = "failed";
    } else if (dry_run) {
      // What the harness's admission checks of each workload (the size limit above all), so
      // that a dry run does not call valid what the import is refused.
      Limits limits;
      limits.max_workload_bytes = max_tensor_bytes;
      for (size_t w = 0; w < d.workloads.size() && d.errors.empty(); ++w) {
        absl::Status s = ValidateWorkload(d.definition, d.workloads[w], limits,
                                          absl::StrCat("workload[", w, "]"));
        if (!s.ok()) d.errors.push_back(absl::StrCat(d.file, ": ", s.message()));
      }
      r.status = d.errors.empty() ? "validated" : "failed";
    } else if (builtin.count(d.name) > 0) {
      r.status = "builtin";
    } else {
      grpc::Status fatal = Register(*connection, d, r, uploaded);
      if (!fatal.ok()) {
        console.err << "kiln: import stopped at " << d.name << " (" << i << " of "
                    << scan.definitions.size() << " definitions done)\n";
        return connection->Fail(fatal, console);
      }
    }
    Progress(console, i, scan.definitions.size(), d, r);
  }
  std::set<std::string> registered;
  for (size_t i = 0; i < scan.definitions.size(); ++i) {
    if (Importable(regs[i])) registered.insert(scan.definitions[i].name);
  }
  std::vector<SolutionRegistration> solution_regs;
  grpc::Status fatal =
      RegisterSolutions(connection ? &*connection : nullptr, scan, registered, &solution_regs);
  if (!fatal.ok()) {
    console.err << "kiln: import stopped while registering solutions (every definition done)\n";
    return connection->Fail(fatal, console);
  }
  const Totals t = Count(scan, regs, solution_regs);
  if (!dry_run && !scan.solutions.empty()) {
    console.err << "kiln: solutions: " << t.solutions_registered << " registered, "
                << t.solutions_unchanged << " already registered, " << t.solutions_failed
                << " failed\n";
  }
  if (inv.args.Has("json")) {
    PrintJson(scan, regs, solution_regs, dry_run, console);
  } else {
    PrintText(scan, regs, solution_regs, dry_run, console);
  }
  if (t.failed > 0 || t.solutions_invalid > 0 || t.solutions_failed > 0 || !scan.errors.empty()) {
    return kExitFailed;
  }
  if (inv.args.Has("strict") && (t.left_out > 0 || t.builtin > 0)) return kExitFailed;
  return kExitOk;
}

}  // namespace kiln::cli
