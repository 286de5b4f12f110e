// Typed reads of YAML scalars for the campaign file, each error naming the field's path
// ("budget.wall_clock_s: expected a number, got 'soon'"). yaml-cpp's exceptions stay inside.
#ifndef KILN_CONTROLLER_SPEC_YAML_FIELDS_H_
#define KILN_CONTROLLER_SPEC_YAML_FIELDS_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace kiln::controller::yaml {

absl::Status FieldError(const std::string& path, const std::string& message);

// INVALID_ARGUMENT naming the first key of `map` (a mapping) not in `allowed`.
absl::Status CheckKeys(const YAML::Node& map, const std::string& path,
                       const std::vector<std::string>& allowed);

absl::Status ExpectMap(const YAML::Node& node, const std::string& path);

// Each Read leaves `out` unchanged when `node` is undefined (the field is optional).
absl::Status ReadString(const YAML::Node& node, const std::string& path, std::string* out);
absl::Status ReadInt(const YAML::Node& node, const std::string& path, int min, int* out);
absl::Status ReadDouble(const YAML::Node& node, const std::string& path, double min, double* out);
absl::Status ReadBool(const YAML::Node& node, const std::string& path, bool* out);
absl::Status ReadStringList(const YAML::Node& node, const std::string& path,
                            std::vector<std::string>* out);

}  // namespace kiln::controller::yaml

#endif  // KILN_CONTROLLER_SPEC_YAML_FIELDS_H_
