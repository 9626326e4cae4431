#include "frontends/torch/sympy_expr.h"

#include <cctype>
#include <limits>

namespace ferry::torch_import {
namespace {

constexpr size_t kMaxSympyChars = 4096;
constexpr int kMaxSympyDepth = 32;

class SympyParser {
 public:
  explicit SympyParser(std::string_view s) : s_(s) {}

  Result<SymExprNode> parse_all() {
    FERRY_ASSIGN_OR_RETURN(SymExprNode e, expr(0));
    skip_space();
    if (pos_ != s_.size()) return error("unexpected text after the expression");
    return e;
  }

 private:
  Status error(const std::string& what) const {
    return invalid_model("symbolic size '" + std::string(s_.substr(0, 200)) + "': " + what + " at offset " +
                         std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }
  Result<int64_t> integer() {
    skip_space();
    bool neg = eat('-');
    skip_space();
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      const int d = s_[pos_] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10) return error("integer out of range");
      v = v * 10 + d;
      ++pos_;
    }
    if (pos_ == start) return error("expected an integer");
    return neg ? -v : v;
  }
  Result<std::string> quoted() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return error("expected a quoted name");
    const char q = s_[pos_++];
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != q) ++pos_;
    if (pos_ >= s_.size()) return error("unterminated name");
    std::string name(s_.substr(start, pos_ - start));
    ++pos_;
    if (name.empty()) return error("empty symbol name");
    return name;
  }
  /// `, key=value` pairs after a Symbol's name (assumptions such as positive=True): skipped.
  Status assumptions() {
    while (eat(',')) {
      if (word().empty() || !eat('=') || word().empty()) return error("expected key=value");
    }
    return Status::Ok();
  }

  Result<SymExprNode> expr(int depth) {
    if (depth > kMaxSympyDepth) return error("nested deeper than " + std::to_string(kMaxSympyDepth));
    std::string head = word();
    if (head.empty()) return error("expected Symbol, Integer, Mul or Add");
    if (!eat('(')) return error("expected '(' after " + head);
    SymExprNode e;
    if (head == "Integer") {
      e.kind = SymExprNode::kInteger;
      FERRY_ASSIGN_OR_RETURN(e.value, integer());
    } else if (head == "Symbol") {
      e.kind = SymExprNode::kSymbol;
      FERRY_ASSIGN_OR_RETURN(e.name, quoted());
      FERRY_TRY(assumptions());
    } else if (head == "Mul" || head == "Add") {
      e.kind = head == "Mul" ? SymExprNode::kMul : SymExprNode::kAdd;
      do {
        FERRY_ASSIGN_OR_RETURN(SymExprNode a, expr(depth + 1));
        e.args.push_back(std::move(a));
      } while (eat(','));
    } else {
      return error("'" + head + "' is not supported (only Symbol, Integer, Mul and Add)");
    }
    if (!eat(')')) return error("expected ')'");
    return e;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Result<SymExprNode> parse_sympy(std::string_view text) {
  if (text.size() > kMaxSympyChars)
    return invalid_model("symbolic size expression of " + std::to_string(text.size()) + " characters, over the limit of " +
                         std::to_string(kMaxSympyChars));
  return SympyParser(text).parse_all();
}

std::string sympy_to_string(const SymExprNode& e) {
  switch (e.kind) {
    case SymExprNode::kInteger: return std::to_string(e.value);
    case SymExprNode::kSymbol: return e.name;
    case SymExprNode::kMul:
    case SymExprNode::kAdd: {
      std::string s;
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) s += e.kind == SymExprNode::kMul ? "*" : " + ";
        s += sympy_to_string(e.args[i]);
      }
      return s;
    }
  }
  return "?";
}

Dim sympy_to_dim(const SymExprNode& e) {
  if (e.kind == SymExprNode::kInteger) return e.value >= 0 ? Dim(e.value) : Dim::unknown();
  return Dim::symbol(sympy_to_string(e));
}

}  // namespace ferry::torch_import
