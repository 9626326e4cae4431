// frontends/torch/sympy_expr.h — the sympy text of torch.export's symbolic sizes, parsed, never evaluated.
//
// torch.export writes a symbolic size as sympy's srepr:
//   Symbol('s77', positive=True, integer=True)
//   Integer(256)
//   Mul(Integer(256), Symbol('s77', ...))       Add(Symbol('s0', ...), Integer(-1))
// The grammar read here is exactly that: Symbol('name', key=value...), Integer(n),
// Mul(e, ...), Add(e, ...). Anything else (FloorDiv, Mod, Max, ...) is an error that
// names the construct. Bounded: 4096 characters, nesting depth 32.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/status.h"
#include "ir/shape.h"

namespace ferry::torch_import {

struct SymExprNode {
  enum Kind { kInteger, kSymbol, kMul, kAdd } kind = kInteger;
  int64_t value = 0;                  ///< kInteger
  std::string name;                   ///< kSymbol
  std::vector<SymExprNode> args;      ///< kMul, kAdd
};

/// Parses one srepr expression.
Result<SymExprNode> parse_sympy(std::string_view text);

/// Canonical text: "s77", "256", "256*s77", "s0 + -1" (for symbolic dim names).
std::string sympy_to_string(const SymExprNode& e);

/// The dim of an expression: a static size, a symbol, or (for a compound expression)
/// a symbol named by its canonical text.
Dim sympy_to_dim(const SymExprNode& e);

}  // namespace ferry::torch_import
