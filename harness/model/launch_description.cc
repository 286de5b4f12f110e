#include "harness/model/launch_description.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "harness/model/dtype.h"

namespace kiln {
namespace {

using Json = nlohmann::json;
constexpr char kField[] = "launch.json";

absl::Status Invalid(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(kField, ": ", field, ": ", what));
}

// The definition's calling order and axes, with the first tensor dimension carrying each axis.
void BindDefinition(const v1::Definition& def, LaunchDescription* d) {
  for (const v1::Axis& axis : def.axes()) {
    LaunchDescription::Axis a;
    a.name = axis.name();
    if (axis.is_const()) a.constant = axis.value();
    d->axes.push_back(a);
  }
  auto add = [&](const v1::TensorSpec& spec) {
    LaunchDescription::Tensor t;
    t.name = spec.name();
    t.dtype = ToAbiDType(spec.dtype());
    t.ndim = spec.scalar() ? 0 : spec.shape_size();
    int32_t index = static_cast<int32_t>(d->tensors.size());
    for (int dim = 0; dim < spec.shape_size(); ++dim) {
      for (size_t a = 0; a < d->axes.size(); ++a) {
        if (d->axes[a].name == spec.shape(dim) && !def.axes(a).is_const() &&
            d->axes[a].tensor < 0) {
          d->axes[a].tensor = index;
          d->axes[a].dim = dim;
        }
      }
    }
    d->tensors.push_back(std::move(t));
  };
  for (const v1::TensorSpec& spec : def.inputs()) add(spec);
  for (const v1::TensorSpec& spec : def.outputs()) add(spec);
}

// An expression from a JSON string or integer; var axes found in no shape cannot be used.
absl::StatusOr<LaunchExpression> Expression(const Json& value, const v1::Definition& def,
                                            const LaunchDescription& d, const std::string& field) {
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_number_integer()) {
    text = std::to_string(value.get<int64_t>());
  } else {
    return Invalid(field, "expected an expression (a string or an integer)");
  }
  std::vector<std::string> names;
  for (const LaunchDescription::Axis& a : d.axes) names.push_back(a.name);
  absl::StatusOr<LaunchExpression> expr =
      ParseLaunchExpression(text, names, absl::StrCat(kField, ": ", field));
  if (!expr.ok()) return expr.status();
  for (const kiln_launch::Op& op : expr->ops) {
    if (op.code != kiln_launch::kPushAxis) continue;
    const LaunchDescription::Axis& axis = d.axes[op.value];
    if (axis.tensor < 0 && !def.axes(static_cast<int>(op.value)).is_const()) {
      return Invalid(field, absl::StrCat("axis '", axis.name,
                                         "' is in no input or output shape, so its value is not "
                                         "known at launch"));
    }
  }
  return expr;
}

absl::StatusOr<int32_t> TensorIndex(const v1::Definition& def, const LaunchDescription& d,
                                    const std::string& name, bool output,
                                    const std::string& field) {
  int32_t first = output ? def.inputs_size() : 0;
  int32_t last = output ? static_cast<int32_t>(d.tensors.size()) : def.inputs_size();
  for (int32_t i = first; i < last; ++i) {
    if (d.tensors[i].name == name) return i;
  }
  return Invalid(field, absl::StrCat("'", name, "' is not an ", output ? "output" : "input",
                                     " of definition '", def.name(), "'"));
}

absl::Status IntegerType(const Json& arg, LaunchDescription::Argument* out,
                         const std::string& field) {
  std::string type = "int";
  if (arg.contains("type")) {
    if (!arg["type"].is_string()) return Invalid(field + ".type", "expected a string");
    type = arg["type"].get<std::string>();
  }
  if (type == "int" || type == "uint") {
    out->bytes = 4;
  } else if (type == "long" || type == "ulong") {
    out->bytes = 8;
  } else {
    return Invalid(field + ".type", absl::StrCat("'", type, "' is not int, uint, long or ulong"));
  }
  out->is_signed = type[0] != 'u';
  return absl::OkStatus();
}

absl::StatusOr<LaunchDescription::Argument> Argument(const Json& arg, const v1::Definition& def,
                                                     const LaunchDescription& d,
                                                     const std::string& field) {
  if (!arg.is_object()) return Invalid(field, "expected an object");
  LaunchDescription::Argument out;
  int kinds = 0;
  for (const char* key : {"input", "output", "axis", "value", "local"}) kinds += arg.contains(key);
  if (kinds != 1) {
    return Invalid(field, "expected exactly one of input, output, axis, value, local");
  }
  for (const char* key : {"input", "output"}) {
    if (!arg.contains(key)) continue;
    const std::string key_field = absl::StrCat(field, ".", key);
    if (!arg[key].is_string()) return Invalid(key_field, "expected a name");
    absl::StatusOr<int32_t> index =
        TensorIndex(def, d, arg[key].get<std::string>(), key[0] == 'o', key_field);
    if (!index.ok()) return index.status();
    out.tensor = *index;
    out.kind =
        d.tensors[*index].ndim == 0 && key[0] == 'i' ? kiln_launch::kScalar : kiln_launch::kBuffer;
    if (out.kind == kiln_launch::kScalar &&
        kiln_launch::ScalarArgBytes(d.tensors[*index].dtype) == 0) {
      return Invalid(key_field, "a scalar of this dtype cannot be a kernel argument");
    }
    return out;
  }
  const char* key = arg.contains("axis") ? "axis" : arg.contains("value") ? "value" : "local";
  const std::string key_field = absl::StrCat(field, ".", key);
  if (key[0] == 'a' && !arg[key].is_string()) return Invalid(key_field, "expected an axis name");
  absl::StatusOr<LaunchExpression> expr = Expression(arg[key], def, d, key_field);
  if (!expr.ok()) return expr.status();
  out.expr = *std::move(expr);
  if (key[0] == 'l') {
    out.kind = kiln_launch::kLocalBytes;
    return out;
  }
  out.kind = kiln_launch::kValue;
  if (absl::Status s = IntegerType(arg, &out, field); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<LaunchExpression>> Sizes(const Json& doc, const char* key,
                                                    const v1::Definition& def,
                                                    const LaunchDescription& d) {
  const Json& list = doc[key];
  if (!list.is_array() || list.empty() || list.size() > kiln_launch::kMaxDims) {
    return Invalid(key, "expected a list of 1 to 3 expressions");
  }
  std::vector<LaunchExpression> out;
  for (size_t i = 0; i < list.size(); ++i) {
    absl::StatusOr<LaunchExpression> e =
        Expression(list[i], def, d, absl::StrCat(key, "[", i, "]"));
    if (!e.ok()) return e.status();
    out.push_back(*std::move(e));
  }
  return out;
}

}  // namespace

absl::StatusOr<LaunchDescription> ParseLaunchDescription(const std::string& json_text,
                                                         const v1::Definition& definition,
                                                         const std::string& default_kernel) {
  Json doc = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(kField, ": not JSON"));
  if (!doc.is_object()) return Invalid("(document)", "expected an object");
  for (const auto& item : doc.items()) {
    const std::string& k = item.key();
    if (k != "kernel" && k != "args" && k != "global" && k != "local") {
      return Invalid(k, "unknown field (known: kernel, args, global, local)");
    }
  }
  if (definition.axes_size() > kiln_launch::kMaxAxes) {
    return Invalid("(document)", absl::StrCat("definition '", definition.name(), "' has more than ",
                                              kiln_launch::kMaxAxes, " axes"));
  }
  LaunchDescription d;
  BindDefinition(definition, &d);
  d.kernel_name = default_kernel;
  if (doc.contains("kernel")) {
    if (!doc["kernel"].is_string() || doc["kernel"].get<std::string>().empty()) {
      return Invalid("kernel", "expected a kernel name");
    }
    d.kernel_name = doc["kernel"].get<std::string>();
  }
  if (!doc.contains("args") || !doc["args"].is_array()) {
    return Invalid("args", "expected a list of kernel arguments");
  }
  for (size_t i = 0; i < doc["args"].size(); ++i) {
    absl::StatusOr<LaunchDescription::Argument> arg =
        Argument(doc["args"][i], definition, d, absl::StrCat("args[", i, "]"));
    if (!arg.ok()) return arg.status();
    d.args.push_back(*std::move(arg));
  }
  if (!doc.contains("global")) return Invalid("global", "required");
  absl::StatusOr<std::vector<LaunchExpression>> global = Sizes(doc, "global", definition, d);
  if (!global.ok()) return global.status();
  d.global = *std::move(global);
  if (doc.contains("local")) {
    absl::StatusOr<std::vector<LaunchExpression>> local = Sizes(doc, "local", definition, d);
    if (!local.ok()) return local.status();
    if (local->size() != d.global.size()) {
      return Invalid("local", absl::StrCat("has ", local->size(), " dimensions, global has ",
                                           d.global.size()));
    }
    d.local = *std::move(local);
  }
  return d;
}

absl::StatusOr<std::string> LaunchDescriptionSource(const v1::Solution& solution) {
  for (const v1::SourceFile& source : solution.sources()) {
    if (source.path() == kLaunchDescriptionPath) return source.content();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("sources: an opencl solution needs a launch description in '",
                   kLaunchDescriptionPath, "' (see docs/level-zero.md)"));
}

LaunchPlanView::LaunchPlanView(const LaunchDescription& d) {
  for (const LaunchDescription::Tensor& t : d.tensors) {
    tensors_.push_back({t.name.c_str(), t.dtype, t.ndim});
  }
  for (const LaunchDescription::Axis& a : d.axes) {
    axes_.push_back({a.name.c_str(), a.tensor, a.dim, a.constant});
  }
  for (const LaunchDescription::Argument& a : d.args) {
    args_.push_back({a.kind, a.tensor, a.bytes, a.is_signed ? 1 : 0, a.expr.view()});
  }
  plan_.format_version = kiln_launch::kPlanFormatVersion;
  plan_.kernel_name = d.kernel_name.c_str();
  plan_.tensors = tensors_.data();
  plan_.num_tensors = static_cast<int32_t>(tensors_.size());
  plan_.axes = axes_.data();
  plan_.num_axes = static_cast<int32_t>(axes_.size());
  plan_.args = args_.data();
  plan_.num_args = static_cast<int32_t>(args_.size());
  plan_.dims = static_cast<int32_t>(d.global.size());
  for (size_t i = 0; i < d.global.size() && i < kiln_launch::kMaxDims; ++i) {
    plan_.global[i] = d.global[i].view();
  }
  plan_.has_local = d.local.empty() ? 0 : 1;
  for (size_t i = 0; i < d.local.size() && i < kiln_launch::kMaxDims; ++i) {
    plan_.local[i] = d.local[i].view();
  }
}

}  // namespace kiln
