// Archive: the settings an operator gives a definition (table definition_settings, one row per
// definition that has any; a NULL column is a setting not made).
#include <string>

#include "absl/strings/str_cat.h"
#include "harness/archive/archive.h"
#include "harness/archive/archive_impl.h"
#include "harness/model/definition_settings.h"
#include "sqlite/status_macros.h"

namespace kiln {

namespace {

using archive::Connection;
using archive::Statement;

constexpr char kColumns[] =
    "atol, rtol, required_matched_ratio, warmup, iterations, trials, min_own_kernel_share, "
    "allow_torch_only";

absl::Status RequireDefinition(Connection& conn, const std::string& name) {
  ARCHIVE_ASSIGN_OR_RETURN(Statement s, conn.Prepare("SELECT 1 FROM definitions WHERE name = ?1"));
  s.BindText(1, name);
  ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("definition '", name, "' not found"));
  return absl::OkStatus();
}

// The stored settings of `definition` (empty when it has no row).
absl::StatusOr<v1::DefinitionSettings> ReadSettings(Connection& conn,
                                                    const std::string& definition) {
  v1::DefinitionSettings out;
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s, conn.Prepare(absl::StrCat("SELECT ", kColumns,
                                             " FROM definition_settings WHERE definition = ?1")));
  s.BindText(1, definition);
  ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) return out;
  return archive::DefinitionSettingsColumns(s, 0);
}

absl::Status WriteSettings(Connection& conn, const std::string& definition,
                           const v1::DefinitionSettings& settings) {
  if (settings.ByteSizeLong() == 0) {
    ARCHIVE_ASSIGN_OR_RETURN(Statement erase,
                             conn.Prepare("DELETE FROM definition_settings WHERE definition = ?1"));
    erase.BindText(1, definition);
    return erase.Run();
  }
  ARCHIVE_ASSIGN_OR_RETURN(Statement s,
                           conn.Prepare(absl::StrCat(
                               "INSERT OR REPLACE INTO definition_settings (definition, ", kColumns,
                               ", updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")));
  s.BindText(1, definition);
  auto bind_double = [&s](int index, bool present, double value) {
    present ? s.BindDouble(index, value) : s.BindNull(index);
  };
  auto bind_int = [&s](int index, bool present, int64_t value) {
    present ? s.BindInt(index, value) : s.BindNull(index);
  };
  bind_double(2, settings.has_atol(), settings.atol());
  bind_double(3, settings.has_rtol(), settings.rtol());
  bind_double(4, settings.has_required_matched_ratio(), settings.required_matched_ratio());
  bind_int(5, settings.has_warmup(), settings.warmup());
  bind_int(6, settings.has_iterations(), settings.iterations());
  bind_int(7, settings.has_trials(), settings.trials());
  bind_double(8, settings.has_min_own_kernel_share(), settings.min_own_kernel_share());
  bind_int(9, settings.has_allow_torch_only(), settings.allow_torch_only() ? 1 : 0);
  s.BindInt(10, archive::NowUnixMs());
  return s.Run();
}

bool SameTolerance(const v1::DefinitionSettings& a, const v1::DefinitionSettings& b) {
  return a.has_atol() == b.has_atol() && a.atol() == b.atol() && a.has_rtol() == b.has_rtol() &&
         a.rtol() == b.rtol() && a.has_required_matched_ratio() == b.has_required_matched_ratio() &&
         a.required_matched_ratio() == b.required_matched_ratio();
}

}  // namespace

namespace archive {

v1::DefinitionSettings DefinitionSettingsColumns(const Statement& s, int first) {
  v1::DefinitionSettings out;
  if (!s.ColumnIsNull(first)) out.set_atol(s.ColumnDouble(first));
  if (!s.ColumnIsNull(first + 1)) out.set_rtol(s.ColumnDouble(first + 1));
  if (!s.ColumnIsNull(first + 2)) out.set_required_matched_ratio(s.ColumnDouble(first + 2));
  if (!s.ColumnIsNull(first + 3)) out.set_warmup(static_cast<int32_t>(s.ColumnInt(first + 3)));
  if (!s.ColumnIsNull(first + 4)) {
    out.set_iterations(static_cast<int32_t>(s.ColumnInt(first + 4)));
  }
  if (!s.ColumnIsNull(first + 5)) out.set_trials(static_cast<int32_t>(s.ColumnInt(first + 5)));
  if (!s.ColumnIsNull(first + 6)) out.set_min_own_kernel_share(s.ColumnDouble(first + 6));
  if (!s.ColumnIsNull(first + 7)) out.set_allow_torch_only(s.ColumnInt(first + 7) != 0);
  return out;
}

}  // namespace archive

absl::StatusOr<v1::DefinitionSettings> Archive::GetDefinitionSettings(
    const std::string& definition) {
  v1::DefinitionSettings settings;
  ARCHIVE_RETURN_IF_ERROR(
      impl_->Read(absl::StrCat("reading the settings of definition '", definition, "'"),
                  [&](Connection& conn) -> absl::Status {
                    ARCHIVE_RETURN_IF_ERROR(RequireDefinition(conn, definition));
                    ARCHIVE_ASSIGN_OR_RETURN(settings, ReadSettings(conn, definition));
                    return absl::OkStatus();
                  }));
  return settings;
}

absl::StatusOr<v1::DefinitionSettings> Archive::UpdateDefinitionSettings(
    const std::string& definition, const v1::DefinitionSettings& update, bool reset) {
  v1::DefinitionSettings stored;
  ARCHIVE_RETURN_IF_ERROR(impl_->Write(
      absl::StrCat("storing the settings of definition '", definition, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_RETURN_IF_ERROR(RequireDefinition(conn, definition));
        ARCHIVE_ASSIGN_OR_RETURN(const v1::DefinitionSettings before,
                                 ReadSettings(conn, definition));
        stored = MergeDefinitionSettings(reset ? v1::DefinitionSettings() : before, update);
        ARCHIVE_RETURN_IF_ERROR(WriteSettings(conn, definition, stored));
        if (SameTolerance(before, stored)) return absl::OkStatus();
        // The integrity warning (integrity_policy.h's DefinitionWarningKey) was found at the old
        // tolerances; the next run judges again at the new ones.
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement clear,
            conn.Prepare("DELETE FROM settings WHERE key = 'integrity_warning:' || ?1"));
        clear.BindText(1, definition);
        return clear.Run();
      }));
  return stored;
}

}  // namespace kiln
