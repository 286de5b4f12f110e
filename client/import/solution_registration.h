// `kiln defs import`'s last step: the dataset's solutions go into the harness's solution
// registry (PutSolution) under the definitions the import registered, as the baselines runs
// name "solution:NAME" (flashinfer-bench's datasets ship FlashInfer's own solutions to compare
// with). A solution in a language this node does not run is registered all the same: the
// registry serves every node.
#ifndef KILN_CLIENT_IMPORT_SOLUTION_REGISTRATION_H_
#define KILN_CLIENT_IMPORT_SOLUTION_REGISTRATION_H_

#include <grpcpp/grpcpp.h>

#include <set>
#include <string>
#include <vector>

#include "client/connection.h"
#include "client/import/dataset_import.h"

namespace kiln::cli {

struct SolutionRegistration {
  // "registered", "unchanged" (the same content was registered under its name already), "to
  // register" (dry run), "failed" (error says why; other content under the name is one such), or
  // "not registered" (the solution is not valid, or its definition was not registered).
  std::string status;
  std::string error;
};

// One entry per scan.solutions. `registered` names the definitions this import registered (or,
// with a null `connection`, a dry run, would register). Returns a call status after which no
// call can succeed (the import stops), else OK; other failures are recorded per solution.
grpc::Status RegisterSolutions(Connection* connection, const DatasetScan& scan,
                               const std::set<std::string>& registered,
                               std::vector<SolutionRegistration>* out);

// Whether a call error leaves the connection unusable for every later call (unreachable,
// unauthenticated, refused, unimplemented).
bool IsFatal(grpc::StatusCode code);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_IMPORT_SOLUTION_REGISTRATION_H_
