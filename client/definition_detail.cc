#include "client/definition_detail.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/model/definition_settings.h"
#include "harness/model/dtype.h"
#include "report/report.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

absl::Status FlagError(const std::string& command, const std::string& flag,
                       const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("kiln ", command, ": --", flag, ": ", message));
}

// Reads --`flag` into *value when given; false when it was not.
absl::StatusOr<bool> ReadNumber(const ParsedArgs& args, const std::string& command,
                                const std::string& flag, double* value) {
  if (!args.Has(flag)) return false;
  if (!absl::SimpleAtod(args.Get(flag), value)) {
    return FlagError(command, flag, absl::StrCat("expected a number, got '", args.Get(flag), "'"));
  }
  return true;
}

absl::StatusOr<bool> ReadCount(const ParsedArgs& args, const std::string& command,
                               const std::string& flag, int* value) {
  if (!args.Has(flag)) return false;
  if (!absl::SimpleAtoi(args.Get(flag), value)) {
    return FlagError(command, flag,
                     absl::StrCat("expected a whole number, got '", args.Get(flag), "'"));
  }
  return true;
}

std::string ShapeText(const v1::TensorSpec& t) {
  if (t.scalar()) return "scalar";
  return absl::StrCat("[", absl::StrJoin(t.shape(), ", "), "]");
}

std::string TensorsText(const google::protobuf::RepeatedPtrField<v1::TensorSpec>& tensors) {
  std::vector<std::string> parts;
  for (const v1::TensorSpec& t : tensors) {
    parts.push_back(
        absl::StrCat(t.name(), " ", ShapeText(t), " ", std::string(DTypeName(t.dtype()))));
  }
  return absl::StrJoin(parts, ", ");
}

std::string DefinitionAxesText(const v1::Definition& def) {
  std::vector<std::string> parts;
  for (const v1::Axis& a : def.axes()) {
    parts.push_back(a.is_const() ? absl::StrCat(a.name(), " = ", a.value())
                                 : absl::StrCat(a.name(), " (var)"));
  }
  return absl::StrJoin(parts, ", ");
}

// A setting's value as its kind is written: counts as integers, switches as true/false.
Json SettingValue(const v1::EffectiveSetting& s, double value) {
  if (s.name() == "allow_torch_only") return Json(value != 0);
  const bool count = s.name() == "warmup" || s.name() == "iterations" || s.name() == "trials";
  return count ? Json(static_cast<int64_t>(value)) : Json(value);
}

std::string SettingText(const v1::EffectiveSetting& s, double value) {
  return SettingValue(s, value).dump();
}

Json TensorsJson(const google::protobuf::RepeatedPtrField<v1::TensorSpec>& tensors) {
  Json out = Json::object();
  for (const v1::TensorSpec& t : tensors) {
    const std::vector<std::string> shape(t.shape().begin(), t.shape().end());
    out[t.name()] = {{"shape", t.scalar() ? Json(nullptr) : Json(shape)},
                     {"dtype", std::string(DTypeName(t.dtype()))}};
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::DefinitionSettings> SettingsFromFlags(const ParsedArgs& args,
                                                         const std::string& command) {
  v1::DefinitionSettings s;
  double number = 0;
  int count = 0;
  struct NumberFlag {
    const char* flag;
    void (v1::DefinitionSettings::*set)(double);
  };
  for (const NumberFlag& f : {NumberFlag{"atol", &v1::DefinitionSettings::set_atol},
                              NumberFlag{"rtol", &v1::DefinitionSettings::set_rtol},
                              NumberFlag{"required-matched-ratio",
                                         &v1::DefinitionSettings::set_required_matched_ratio},
                              NumberFlag{"min-own-kernel-share",
                                         &v1::DefinitionSettings::set_min_own_kernel_share}}) {
    absl::StatusOr<bool> given = ReadNumber(args, command, f.flag, &number);
    if (!given.ok()) return given.status();
    if (*given) (s.*f.set)(number);
  }
  struct CountFlag {
    const char* flag;
    void (v1::DefinitionSettings::*set)(int32_t);
  };
  for (const CountFlag& f : {CountFlag{"warmup", &v1::DefinitionSettings::set_warmup},
                             CountFlag{"iterations", &v1::DefinitionSettings::set_iterations},
                             CountFlag{"trials", &v1::DefinitionSettings::set_trials}}) {
    absl::StatusOr<bool> given = ReadCount(args, command, f.flag, &count);
    if (!given.ok()) return given.status();
    if (*given) (s.*f.set)(count);
  }
  if (args.Has("allow-torch-only")) {
    const std::string value = args.Get("allow-torch-only");
    if (value != "true" && value != "false") {
      return FlagError(command, "allow-torch-only",
                       absl::StrCat("expected true or false, got '", value, "'"));
    }
    s.set_allow_torch_only(value == "true");
  }
  if (absl::Status valid = ValidateDefinitionSettings(s, SettingNames::kFlag); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("kiln ", command, ": ", valid.message()));
  }
  return s;
}

std::string SettingsColumn(const v1::DefinitionSummary& summary) {
  const std::string text = DefinitionSettingsText(summary.settings());
  return text.empty() ? std::string(kAbsent) : text;
}

std::string DefinitionDetailText(const v1::DefinitionDetail& detail) {
  const v1::Definition& def = detail.definition();
  const v1::DefinitionSummary& summary = detail.summary();
  std::string out;
  auto field = [&out](absl::string_view name, absl::string_view value) {
    absl::StrAppend(&out, name, std::string(name.size() < 18 ? 18 - name.size() : 1, ' '),
                    value.empty() ? kAbsent : value, "\n");
  };
  field("definition", def.name());
  field("op_type", def.op_type());
  field("axes", DefinitionAxesText(def));
  field("inputs", TensorsText(def.inputs()));
  field("outputs", TensorsText(def.outputs()));
  field("tags", absl::StrJoin(def.tags(), ", "));
  field("workloads", absl::StrCat(summary.workload_count()));
  field("builtin", summary.builtin() ? "yes" : "no");
  field("native reference", summary.has_native_reference() ? "yes" : "no");
  field("integrity", summary.integrity_warning().empty()
                         ? "ok"
                         : absl::StrCat("DEGENERATE: ", summary.integrity_warning()));
  Table table({{"setting"}, {"value", Align::kRight}, {"source"}, {"default", Align::kRight}});
  for (const v1::EffectiveSetting& s : detail.effective()) {
    table.AddRow(
        {s.name(), SettingText(s, s.value()), s.source(), SettingText(s, s.default_value())});
  }
  absl::StrAppend(&out,
                  "\nevaluation settings (default: flashinfer-bench's; set: kiln defs set; the "
                  "counts apply to official mode)\n",
                  table.Render());
  // The reference the outputs are judged against, named for what it is.
  if (def.has_kernelbench()) {
    absl::StrAppend(&out, "\nreference: KernelBench problem ", def.kernelbench().file(),
                    " (its Model, called as KernelBench calls it, under torch)\n");
    if (!def.reference().empty()) absl::StrAppend(&out, def.reference(), "\n");
  } else if (!def.reference().empty()) {
    absl::StrAppend(&out, "\nreference: the definition's Python run() under torch "
                          "(flashinfer-bench's reference)\n",
                    def.reference(), "\n");
  } else if (summary.has_native_reference()) {
    absl::StrAppend(&out, "\nreference: its native_reference (",
                    def.native_reference().spec().language(), ", ",
                    def.native_reference().spec().entry_point(), ")\n");
  }
  if (detail.workloads_size() > 0) {
    Table workloads({{"#", Align::kRight}, {"workload"}, {"axes"}});
    int i = 0;
    for (const v1::Workload& w : detail.workloads()) {
      workloads.AddRow({absl::StrCat(++i), w.uuid(), AxesText(w)});  // from 1, as runs number them
    }
    absl::StrAppend(&out, "\nworkloads:\n", workloads.Render());
  }
  return out;
}

Json DefinitionDetailJson(const v1::DefinitionDetail& detail) {
  const v1::Definition& def = detail.definition();
  const v1::DefinitionSummary& summary = detail.summary();
  Json axes = Json::object();
  for (const v1::Axis& a : def.axes()) {
    axes[a.name()] =
        a.is_const() ? Json{{"type", "const"}, {"value", a.value()}} : Json{{"type", "var"}};
  }
  Json workloads = Json::array();
  for (const v1::Workload& w : detail.workloads()) {
    Json axes_of = Json::object();
    for (const v1::AxisValue& a : w.axes()) axes_of[a.name()] = a.value();
    workloads.push_back({{"uuid", w.uuid()}, {"axes", axes_of}});
  }
  Json settings = Json::object();
  for (const v1::EffectiveSetting& s : detail.effective()) {
    settings[s.name()] = {{"value", SettingValue(s, s.value())},
                          {"source", s.source()},
                          {"default", SettingValue(s, s.default_value())}};
  }
  return Json{{"name", def.name()},
              {"op_type", def.op_type()},
              {"axes", axes},
              {"inputs", TensorsJson(def.inputs())},
              {"outputs", TensorsJson(def.outputs())},
              {"tags", Json(std::vector<std::string>(def.tags().begin(), def.tags().end()))},
              {"description", def.description()},
              {"workload_count", summary.workload_count()},
              {"builtin", summary.builtin()},
              {"native_reference", summary.has_native_reference()},
              {"integrity_warning", summary.integrity_warning()},
              {"reference", def.has_kernelbench()     ? "kernelbench"
                            : !def.reference().empty() ? "python"
                            : summary.has_native_reference() ? "native"
                                                             : ""},
              {"workloads", workloads},
              {"settings", settings}};
}

}  // namespace kiln::cli
