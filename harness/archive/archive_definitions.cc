// Archive: definitions and their workload lists.
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/archive/archive.h"
#include "harness/archive/archive_impl.h"
#include "sqlite/status_macros.h"

namespace kiln {

namespace {

using archive::Connection;
using archive::Statement;

absl::Status CheckWorkloadUuids(const std::vector<v1::Workload>& workloads) {
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < workloads.size(); ++i) {
    const std::string& uuid = workloads[i].uuid();
    if (uuid.empty())
      return absl::InvalidArgumentError(absl::StrCat("workloads[", i, "].uuid is empty"));
    if (!seen.insert(uuid).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("workloads[", i, "].uuid '", uuid, "' appears more than once"));
    }
  }
  return absl::OkStatus();
}

// A definition's integrity warning (the setting "integrity_warning:<name>", written by the
// harness when a run shows that zeros or a constant pass it) belongs to its content: replacing
// the definition with different content clears it.
absl::Status ClearStaleIntegrityWarning(Connection& conn, const v1::Definition& def) {
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s, conn.Prepare("DELETE FROM settings WHERE key = 'integrity_warning:' || ?1 AND "
                                "NOT EXISTS (SELECT 1 FROM definitions WHERE name = ?1 AND "
                                "definition_pb = ?2)"));
  s.BindText(1, def.name());
  s.BindBlob(2, def.SerializeAsString());
  return s.Run();
}

absl::Status UpsertDefinitionRow(Connection& conn, const v1::Definition& def, int workload_count,
                                 bool builtin) {
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s,
      conn.Prepare("INSERT INTO definitions (name, op_type, definition_pb, builtin, "
                   "has_native_reference, workload_count, updated_ms) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (name) DO UPDATE SET "
                   "op_type = excluded.op_type, definition_pb = excluded.definition_pb, "
                   "builtin = excluded.builtin, "
                   "has_native_reference = excluded.has_native_reference, "
                   "workload_count = excluded.workload_count, updated_ms = excluded.updated_ms"));
  const bool native = def.has_native_reference() && def.native_reference().sources_size() > 0;
  s.BindText(1, def.name());
  s.BindText(2, def.op_type());
  s.BindBlob(3, def.SerializeAsString());
  s.BindInt(4, builtin ? 1 : 0);
  s.BindInt(5, native ? 1 : 0);
  s.BindInt(6, workload_count);
  s.BindInt(7, archive::NowUnixMs());
  return s.Run();
}

absl::Status ReplaceWorkloads(Connection& conn, const std::string& definition,
                              const std::vector<v1::Workload>& workloads) {
  {
    ARCHIVE_ASSIGN_OR_RETURN(Statement erase,
                             conn.Prepare("DELETE FROM workloads WHERE definition = ?1"));
    erase.BindText(1, definition);
    ARCHIVE_RETURN_IF_ERROR(erase.Run());
  }
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement insert,
      conn.Prepare("INSERT INTO workloads (definition, position, uuid, workload_pb) "
                   "VALUES (?1, ?2, ?3, ?4)"));
  for (size_t i = 0; i < workloads.size(); ++i) {
    insert.BindText(1, definition);
    insert.BindInt(2, static_cast<int64_t>(i));
    insert.BindText(3, workloads[i].uuid());
    insert.BindBlob(4, workloads[i].SerializeAsString());
    ARCHIVE_RETURN_IF_ERROR(insert.Run());
    ARCHIVE_RETURN_IF_ERROR(insert.Reset());
  }
  return absl::OkStatus();
}

absl::Status CheckDefinitionExists(Connection& conn, const std::string& name) {
  ARCHIVE_ASSIGN_OR_RETURN(Statement s, conn.Prepare("SELECT 1 FROM definitions WHERE name = ?1"));
  s.BindText(1, name);
  ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("definition '", name, "' not found"));
  return absl::OkStatus();
}

}  // namespace

absl::Status Archive::PutDefinition(const v1::Definition& def,
                                    const std::vector<v1::Workload>& workloads, bool builtin) {
  if (def.name().empty()) return absl::InvalidArgumentError("definition name is empty");
  ARCHIVE_RETURN_IF_ERROR(CheckWorkloadUuids(workloads));
  return impl_->Write(
      absl::StrCat("storing definition '", def.name(), "'"), [&](Connection& conn) -> absl::Status {
        ARCHIVE_RETURN_IF_ERROR(ClearStaleIntegrityWarning(conn, def));
        ARCHIVE_RETURN_IF_ERROR(
            UpsertDefinitionRow(conn, def, static_cast<int>(workloads.size()), builtin));
        return ReplaceWorkloads(conn, def.name(), workloads);
      });
}

absl::StatusOr<v1::Definition> Archive::GetDefinition(const std::string& name) {
  v1::Definition def;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read(
      absl::StrCat("reading definition '", name, "'"), [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement s, conn.Prepare("SELECT definition_pb FROM definitions WHERE name = ?1"));
        s.BindText(1, name);
        ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
        if (!found) return absl::NotFoundError(absl::StrCat("definition '", name, "' not found"));
        std::string_view bytes = s.ColumnBlob(0);
        if (!def.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
          return absl::DataLossError(absl::StrCat("stored definition '", name, "' is corrupt"));
        }
        return absl::OkStatus();
      }));
  return def;
}

absl::StatusOr<std::vector<v1::Workload>> Archive::GetWorkloads(const std::string& definition) {
  std::vector<v1::Workload> workloads;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read(
      absl::StrCat("reading the workloads of definition '", definition, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_RETURN_IF_ERROR(CheckDefinitionExists(conn, definition));
        ARCHIVE_ASSIGN_OR_RETURN(Statement s,
                                 conn.Prepare("SELECT uuid, workload_pb FROM workloads "
                                              "WHERE definition = ?1 ORDER BY position"));
        s.BindText(1, definition);
        for (;;) {
          ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
          if (!row) return absl::OkStatus();
          std::string_view bytes = s.ColumnBlob(1);
          if (!workloads.emplace_back().ParseFromArray(bytes.data(),
                                                       static_cast<int>(bytes.size()))) {
            return absl::DataLossError(absl::StrCat("stored workload '", s.ColumnText(0),
                                                    "' of definition '", definition,
                                                    "' is corrupt"));
          }
        }
      }));
  return workloads;
}

absl::StatusOr<v1::ListDefinitionsResponse> Archive::ListDefinitions() {
  v1::ListDefinitionsResponse response;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read("listing definitions", [&](Connection& conn) -> absl::Status {
    ARCHIVE_ASSIGN_OR_RETURN(
        Statement s,
        conn.Prepare("SELECT name, op_type, workload_count, builtin, has_native_reference, "
                     "(SELECT value FROM settings WHERE key = 'integrity_warning:' || name), "
                     "ds.atol, ds.rtol, ds.required_matched_ratio, ds.warmup, ds.iterations, "
                     "ds.trials, ds.min_own_kernel_share, ds.allow_torch_only FROM definitions "
                     "LEFT JOIN definition_settings ds ON ds.definition = definitions.name ORDER BY name"));
    for (;;) {
      ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) return absl::OkStatus();
      v1::DefinitionSummary* summary = response.add_definitions();
      summary->set_name(s.ColumnText(0));
      summary->set_op_type(s.ColumnText(1));
      summary->set_workload_count(static_cast<int32_t>(s.ColumnInt(2)));
      summary->set_builtin(s.ColumnInt(3) != 0);
      summary->set_has_native_reference(s.ColumnInt(4) != 0);
      summary->set_integrity_warning(std::string(s.ColumnBlob(5)));
      v1::DefinitionSettings settings = archive::DefinitionSettingsColumns(s, 6);
      if (settings.ByteSizeLong() > 0) *summary->mutable_settings() = std::move(settings);
    }
  }));
  return response;
}

}  // namespace kiln
