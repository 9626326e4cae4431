// passes/match_util.h — small matching helpers shared by the fusion passes.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ops/movement_util.h"  // ints_to_string
#include "passes/rewriter.h"

namespace ferry {

/// The value of a one-element floating-point or integer constant, else nullopt.
std::optional<double> scalar_constant(const Value* v);
/// |a - b| <= rtol * |b|: constants as exporters write them (rounded to f32, or to 4-6 digits).
inline bool approx(double a, double b, double rtol = 1e-4) { return std::fabs(a - b) <= rtol * std::fabs(b); }
/// The operand of binary node `n` that is not `v` (null when neither or both are `v`).
Value* other_operand(const Node& n, const Value* v);
/// The single consumer of `v` when it has one use and is not a graph output, else null.
Node* single_consumer(const Graph& g, const Value* v);
/// The single consumer of `v` if it is of op `op`.
Node* single_consumer_of(const Graph& g, const Value* v, Op op);
/// "Mul" for a produced value, "a graph input" / "a constant" otherwise (near-miss reasons).
std::string found(const Value* v);
/// Constant int64 axes of a Reduce* node (input 1), normalized to [0, rank); nullopt when not known.
std::optional<std::vector<int64_t>> reduce_axes(const Node& reduce, int64_t rank);

/// A product tree of Mul nodes flattened: y = coefficient * prod(factors).
/// Inner Mul nodes are followed only while their output has one use (the root
/// is always followed), so nothing outside the tree reads a partial product.
struct Product {
  double coefficient = 1;
  std::vector<Value*> factors;      ///< non-constant leaves, in visit order
  std::vector<const Node*> nodes;   ///< the Mul nodes of the tree (root first)
  bool ok = true;                   ///< false when a constant leaf had more than one element
};
Product flatten_product(const Graph& g, Value* root, int max_depth = 4);

}  // namespace ferry

namespace ferry {

/// `v` rounded to f32 and written with the fewest decimal digits that give that f32
/// back (1e-05, not 9.99999974737875e-06): ONNX float attributes are f32.
double f32_attr(double v);

/// a + b as a new Add node, or, when both are constants, as a constant computed
/// with the reference kernel (passes that run after constant folding use this).
Value* add_values(Rewriter& rw, Value* a, Value* b, const Node* from, const std::string& name);

}  // namespace ferry
