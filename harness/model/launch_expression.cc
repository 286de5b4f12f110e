#include "harness/model/launch_expression.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

using kiln_launch::Op;

struct Function {
  const char* name;
  int32_t code;
};
constexpr Function kFunctions[] = {{"ceil_div", kiln_launch::kCeilDiv},
                                   {"round_up", kiln_launch::kRoundUp},
                                   {"min", kiln_launch::kMin},
                                   {"max", kiln_launch::kMax}};

// Recursive descent over the grammar in the header, emitting postfix ops.
class Parser {
 public:
  Parser(const std::string& text, const std::vector<std::string>& axes, const std::string& field)
      : text_(text), axes_(axes), field_(field) {}

  absl::Status Parse(std::vector<Op>* out) {
    if (absl::Status s = Expr(); !s.ok()) return s;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected character");
    if (ops_.size() > static_cast<size_t>(kiln_launch::kMaxExprOps)) {
      return Error("expression too long");
    }
    *out = std::move(ops_);
    return absl::OkStatus();
  }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(field_, ": '", text_, "': ", what, " at ", pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  absl::Status Expr() {
    if (absl::Status s = Term(); !s.ok()) return s;
    while (true) {
      int32_t code = Accept('+') ? kiln_launch::kAdd : Accept('-') ? kiln_launch::kSub : -1;
      if (code < 0) return absl::OkStatus();
      if (absl::Status s = Term(); !s.ok()) return s;
      ops_.push_back({code, 0});
    }
  }

  absl::Status Term() {
    if (absl::Status s = Unary(); !s.ok()) return s;
    while (true) {
      int32_t code = Accept('*')   ? kiln_launch::kMul
                     : Accept('/') ? kiln_launch::kDiv
                     : Accept('%') ? kiln_launch::kMod
                                   : -1;
      if (code < 0) return absl::OkStatus();
      if (absl::Status s = Unary(); !s.ok()) return s;
      ops_.push_back({code, 0});
    }
  }

  absl::Status Unary() {
    if (++depth_ > kiln_launch::kMaxExprOps) return Error("expression nested too deeply");
    absl::Status s;
    if (Accept('-')) {
      s = Unary();
      if (s.ok()) ops_.push_back({kiln_launch::kNeg, 0});
    } else {
      s = Primary();
    }
    --depth_;
    return s;
  }

  absl::Status Primary() {
    SkipSpace();
    if (Accept('(')) {
      if (absl::Status s = Expr(); !s.ok()) return s;
      return Accept(')') ? absl::OkStatus() : Error("expected ')'");
    }
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      return Number();
    }
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (start == pos_) return Error("expected a value");
    std::string name = text_.substr(start, pos_ - start);
    if (Accept('(')) return Call(name, start);
    auto it = std::find(axes_.begin(), axes_.end(), name);
    if (it == axes_.end()) {
      pos_ = start;
      return Error(absl::StrCat("'", name, "' is not an axis of the definition"));
    }
    ops_.push_back({kiln_launch::kPushAxis, it - axes_.begin()});
    return absl::OkStatus();
  }

  absl::Status Number() {
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[pos_] - '0', &value)) {
        return Error("integer too large");
      }
      ++pos_;
    }
    ops_.push_back({kiln_launch::kPushConstant, value});
    return absl::OkStatus();
  }

  absl::Status Call(const std::string& name, size_t start) {
    const Function* fn = nullptr;
    for (const Function& f : kFunctions) {
      if (name == f.name) fn = &f;
    }
    if (fn == nullptr) {
      pos_ = start;
      return Error(
          absl::StrCat("unknown function '", name, "' (known: ceil_div, round_up, min, max)"));
    }
    if (absl::Status s = Expr(); !s.ok()) return s;
    if (!Accept(',')) return Error(absl::StrCat("expected ',' in ", name, "(a, b)"));
    if (absl::Status s = Expr(); !s.ok()) return s;
    if (!Accept(')')) return Error("expected ')'");
    ops_.push_back({fn->code, 0});
    return absl::OkStatus();
  }

  const std::string& text_;
  const std::vector<std::string>& axes_;
  const std::string& field_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<Op> ops_;
};

}  // namespace

absl::StatusOr<LaunchExpression> ParseLaunchExpression(const std::string& text,
                                                       const std::vector<std::string>& axis_names,
                                                       const std::string& field) {
  LaunchExpression expr;
  expr.text = text;
  Parser parser(text, axis_names, field);
  if (absl::Status s = parser.Parse(&expr.ops); !s.ok()) return s;
  return expr;
}

absl::StatusOr<int64_t> EvaluateLaunchExpression(const LaunchExpression& expr,
                                                 const std::vector<int64_t>& axis_values) {
  if (axis_values.size() > static_cast<size_t>(kiln_launch::kMaxAxes)) {
    return absl::InvalidArgumentError(absl::StrCat("more than ", kiln_launch::kMaxAxes, " axes"));
  }
  kiln_launch::AxisValues axes;
  std::copy(axis_values.begin(), axis_values.end(), axes.value);
  kiln_launch::Error error;
  int64_t value = 0;
  if (!kiln_launch::Evaluate(expr.view(), axes, static_cast<int32_t>(axis_values.size()), &value,
                             &error)) {
    return absl::InvalidArgumentError(error.text);
  }
  return value;
}

}  // namespace kiln
