// Archive: the solution registry (table solutions, keyed by definition and name).
#include <string>

#include "absl/strings/str_cat.h"
#include "harness/archive/archive.h"
#include "harness/archive/archive_impl.h"
#include "harness/model/solution_digest.h"
#include "sqlite/status_macros.h"

namespace kiln {

namespace {

using archive::Connection;
using archive::Statement;

constexpr char kListColumns[] = "name, definition, language, author, sha256, created_ms";

v1::RegisteredSolution Row(const Statement& s) {
  v1::RegisteredSolution r;
  r.set_name(s.ColumnText(0));
  r.set_definition(s.ColumnText(1));
  r.set_language(s.ColumnText(2));
  r.set_author(s.ColumnText(3));
  r.set_sha256(s.ColumnText(4));
  r.set_created_unix_ms(s.ColumnInt(5));
  return r;
}

absl::Status RequireDefinitionForSolution(Connection& conn, const std::string& name) {
  ARCHIVE_ASSIGN_OR_RETURN(Statement s, conn.Prepare("SELECT 1 FROM definitions WHERE name = ?1"));
  s.BindText(1, name);
  ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) {
    return absl::NotFoundError(
        absl::StrCat("solution.definition: definition '", name, "' is not registered"));
  }
  return absl::OkStatus();
}

// The digest stored under (definition, name), or "" when nothing is.
absl::StatusOr<std::string> StoredDigest(Connection& conn, const std::string& definition,
                                         const std::string& name) {
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s,
      conn.Prepare("SELECT sha256 FROM solutions WHERE definition = ?1 AND name = ?2"));
  s.BindText(1, definition);
  s.BindText(2, name);
  ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
  return found ? s.ColumnText(0) : std::string();
}

}  // namespace

absl::StatusOr<v1::PutSolutionResponse> Archive::PutSolution(const std::string& name,
                                                             const v1::Solution& solution,
                                                             bool replace) {
  const std::string& definition = solution.definition();
  if (name.empty()) return absl::InvalidArgumentError("name: empty");
  v1::PutSolutionResponse response;
  v1::RegisteredSolution* r = response.mutable_solution();
  r->set_name(name);
  r->set_definition(definition);
  r->set_language(solution.spec().language());
  r->set_author(solution.author());
  r->set_sha256(SolutionDigest(solution));
  ARCHIVE_RETURN_IF_ERROR(impl_->Write(
      absl::StrCat("storing solution '", name, "' of definition '", definition, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_RETURN_IF_ERROR(RequireDefinitionForSolution(conn, definition));
        ARCHIVE_ASSIGN_OR_RETURN(const std::string stored, StoredDigest(conn, definition, name));
        if (stored == r->sha256()) {
          response.set_outcome("unchanged");
          ARCHIVE_ASSIGN_OR_RETURN(
              Statement s, conn.Prepare(absl::StrCat("SELECT ", kListColumns,
                                                     " FROM solutions WHERE definition = ?1 "
                                                     "AND name = ?2")));
          s.BindText(1, definition);
          s.BindText(2, name);
          ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
          if (found) *r = Row(s);
          return absl::OkStatus();
        }
        if (!stored.empty() && !replace) {
          return absl::AlreadyExistsError(
              absl::StrCat("name: solution '", name, "' of definition '", definition,
                           "' is registered with other content (sha256 ", stored.substr(0, 12),
                           "...); replace it explicitly to change it"));
        }
        response.set_outcome(stored.empty() ? "created" : "replaced");
        r->set_created_unix_ms(archive::NowUnixMs());
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement s,
            conn.Prepare("INSERT OR REPLACE INTO solutions (definition, name, language, author, "
                         "sha256, solution_pb, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
        s.BindText(1, definition);
        s.BindText(2, name);
        s.BindText(3, r->language());
        s.BindText(4, r->author());
        s.BindText(5, r->sha256());
        s.BindBlob(6, solution.SerializeAsString());
        s.BindInt(7, r->created_unix_ms());
        return s.Run();
      }));
  return response;
}

absl::StatusOr<v1::Solution> Archive::GetSolution(const std::string& definition,
                                                  const std::string& name) {
  v1::Solution solution;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read(
      absl::StrCat("reading solution '", name, "' of definition '", definition, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement s,
            conn.Prepare("SELECT solution_pb FROM solutions WHERE definition = ?1 AND name = ?2"));
        s.BindText(1, definition);
        s.BindText(2, name);
        ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
        if (!found) {
          return absl::NotFoundError(absl::StrCat(
              "no solution '", name, "' is registered for definition '", definition, "'"));
        }
        std::string_view bytes = s.ColumnBlob(0);
        if (!solution.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
          return absl::DataLossError(absl::StrCat("stored solution '", name, "' of definition '",
                                                  definition, "' is corrupt"));
        }
        return absl::OkStatus();
      }));
  return solution;
}

absl::StatusOr<v1::ListSolutionsResponse> Archive::ListSolutions(const std::string& definition) {
  v1::ListSolutionsResponse response;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read("listing solutions", [&](Connection& conn) -> absl::Status {
    ARCHIVE_ASSIGN_OR_RETURN(
        Statement s, conn.Prepare(absl::StrCat("SELECT ", kListColumns,
                                               " FROM solutions WHERE ?1 = '' OR definition = ?1 "
                                               "ORDER BY definition, name")));
    s.BindText(1, definition);
    for (;;) {
      ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) return absl::OkStatus();
      *response.add_solutions() = Row(s);
    }
  }));
  return response;
}

}  // namespace kiln
