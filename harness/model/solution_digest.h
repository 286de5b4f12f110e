// The identity of a solution document: a SHA-256 over every field of a kiln.v1.Solution (name,
// definition, author, description, the whole spec, every source's path and content), so that
// equal digests mean identical documents. The solution registry compares and shows it.
// (A run's solution_hash is narrower: it leaves out names and prose, identifying the program.)
#ifndef KILN_HARNESS_MODEL_SOLUTION_DIGEST_H_
#define KILN_HARNESS_MODEL_SOLUTION_DIGEST_H_

#include <string>

#include "kiln/v1/types.pb.h"

namespace kiln {

// Lowercase hex SHA-256. Independent of protobuf's serialization: stable across versions.
std::string SolutionDigest(const v1::Solution& solution);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_SOLUTION_DIGEST_H_
