#include "harness/model/launch_plan_source.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln {
namespace {

// Emits the op array of `expr` (when it has ops) and returns the Expr initializer.
std::string ExprSource(const LaunchExpression& expr, const std::string& name, std::string* out) {
  if (expr.ops.empty()) return "{nullptr, 0, \"\"}";
  absl::StrAppend(out, "static const kiln_launch::Op ", name, "[] = {");
  for (const kiln_launch::Op& op : expr.ops) {
    absl::StrAppend(out, "{", op.code, ", INT64_C(", op.value, ")}, ");
  }
  absl::StrAppend(out, "};\n");
  return absl::StrCat("{", name, ", ", expr.ops.size(), ", ", CStringLiteral(expr.text), "}");
}

}  // namespace

std::string CStringLiteral(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      absl::StrAppend(&out, "\\", std::string(1, static_cast<char>(c)));
    } else if (c >= 0x20 && c < 0x7f && c != '?') {  // '?' would make trigraphs possible
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, absl::StrFormat("\\%03o", c));
    }
  }
  return out + "\"";
}

std::string LaunchPlanSource(const LaunchDescription& d, const std::string& plan_name) {
  std::string out;
  const std::string p = plan_name;
  std::string tensors = "nullptr", axes = "nullptr", args = "nullptr";
  if (!d.tensors.empty()) {
    tensors = p + "_tensors";
    absl::StrAppend(&out, "static const kiln_launch::TensorSignature ", tensors, "[] = {\n");
    for (const LaunchDescription::Tensor& t : d.tensors) {
      absl::StrAppend(&out, "  {", CStringLiteral(t.name), ", ", t.dtype, ", ", t.ndim, "},\n");
    }
    absl::StrAppend(&out, "};\n");
  }
  if (!d.axes.empty()) {
    axes = p + "_axes";
    absl::StrAppend(&out, "static const kiln_launch::AxisSource ", axes, "[] = {\n");
    for (const LaunchDescription::Axis& a : d.axes) {
      absl::StrAppend(&out, "  {", CStringLiteral(a.name), ", ", a.tensor, ", ", a.dim,
                      ", INT64_C(", a.constant, ")},\n");
    }
    absl::StrAppend(&out, "};\n");
  }
  std::vector<std::string> arg_exprs;
  for (size_t i = 0; i < d.args.size(); ++i) {
    arg_exprs.push_back(ExprSource(d.args[i].expr, absl::StrCat(p, "_arg", i), &out));
  }
  if (!d.args.empty()) {
    args = p + "_args";
    absl::StrAppend(&out, "static const kiln_launch::ArgBinding ", args, "[] = {\n");
    for (size_t i = 0; i < d.args.size(); ++i) {
      const LaunchDescription::Argument& a = d.args[i];
      absl::StrAppend(&out, "  {", a.kind, ", ", a.tensor, ", ", a.bytes, ", ", a.is_signed ? 1 : 0,
                      ", ", arg_exprs[i], "},\n");
    }
    absl::StrAppend(&out, "};\n");
  }
  std::string global = "{", local = "{";
  for (size_t i = 0; i < kiln_launch::kMaxDims; ++i) {
    LaunchExpression none;
    const LaunchExpression& g = i < d.global.size() ? d.global[i] : none;
    const LaunchExpression& l = i < d.local.size() ? d.local[i] : none;
    absl::StrAppend(&global, ExprSource(g, absl::StrCat(p, "_global", i), &out), ", ");
    absl::StrAppend(&local, ExprSource(l, absl::StrCat(p, "_local", i), &out), ", ");
  }
  global += "}";
  local += "}";
  absl::StrAppend(&out, "static const kiln_launch::Plan ", p, " = {\n  ",
                  kiln_launch::kPlanFormatVersion, ", ", CStringLiteral(d.kernel_name), ",\n  ",
                  tensors, ", ", d.tensors.size(), ", ", axes, ", ", d.axes.size(), ", ", args,
                  ", ", d.args.size(), ",\n  ", d.global.size(), ", ", global, ",\n  ",
                  d.local.empty() ? 0 : 1, ", ", local, "};\n");
  return out;
}

}  // namespace kiln
