// passes/rewriter.h — all graph mutation in passes goes through a Rewriter.
//
// A pass is a list of patterns. A pattern is a small function rooted at one op:
//
//   // conv(x, W, b) * s  ==>  conv(x, W*s, b*s)        s: per-output-channel constant
//   bool fold_mul_into_conv(Rewriter& rw, Node& mul) {
//     Node* conv = producer_of(mul.input(0), Op::Conv);
//     if (!conv) return false;                                   // not this pattern
//     if (conv->output(0)->uses().size() != 1)
//       return rw.near_miss("Conv output has 2 consumers", {conv, &mul});
//     ...
//     Node* fused = rw.create(Op::Conv, {...}, 1, conv->attrs(), {conv, &mul});
//     rw.replace_uses(mul.output(0), fused->output(0));
//     return true;                                               // applied
//   }
//
// Guards return false ("did not match" is never an error). A guard that fails
// after the pattern's shape was recognized calls near_miss(reason, nodes): it
// is counted and reported with the nodes' provenance — the fusion report.
// New nodes take the union of the provenance of the nodes they replace (a
// node without provenance, e.g. from hand-written text IR, counts as its name).
// Dead nodes are swept by the driver, so patterns never delete explicitly.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

struct NearMiss {
  std::string reason;
  std::vector<std::string> source_nodes;  ///< provenance of the nodes involved
};

/// Counts for one pattern of one pass.
struct PatternStats {
  int64_t matched = 0;  ///< applied + near misses
  int64_t applied = 0;
  std::vector<NearMiss> near_misses;
};

/// pass name -> pattern name -> stats. The fusion report is built from this.
using PassStats = std::map<std::string, std::map<std::string, PatternStats>>;

class Rewriter {
 public:
  Rewriter(Graph& g, PatternStats* stats) : g_(g), stats_(stats) {}
  Graph& graph() { return g_; }

  /// A new constant value holding `t`.
  Value* constant(Tensor t, const std::string& name_hint = "const");
  /// A new node; its provenance is the union of `from`'s provenance. Outputs
  /// get fresh unique names derived from `name_hint` (or the op name) and, when
  /// inference succeeds, their dtypes and shapes.
  Node* create(Op op, std::vector<Value*> inputs, size_t num_outputs, AttrMap attrs,
               const std::vector<const Node*>& from, const std::string& name_hint = "");
  void set_input(Node& node, size_t index, Value* v);
  /// Uses of `from` (and graph outputs) now read `to`. Keeps the graph output's name
  /// when `from` was a graph output, unless can_replace(from, to) is false.
  void replace_uses(Value* from, Value* to);
  /// Replaces every use of `from` (and graph outputs) by a new constant holding
  /// `t`, which takes over from's name. Returns the constant.
  Value* replace_with_constant(Value* from, Tensor t);
  /// False when replace_uses(from, to) would rename a graph output: `from` is a
  /// graph output and `to` is a graph input or already a graph output.
  bool can_replace(const Value* from, const Value* to) const;
  /// Records a near miss and returns false (so a guard can `return rw.near_miss(...)`).
  bool near_miss(std::string reason, const std::vector<const Node*>& nodes);
  bool changed() const { return changed_; }
  void set_stats(PatternStats* stats) { stats_ = stats; }

 private:
  void stand_for(const Value* from, const Value* to);

  Graph& g_;
  PatternStats* stats_;
  bool changed_ = false;
};

/// The producer of `v` if it is a node of op `op`, else null.
Node* producer_of(const Value* v, Op op);
/// `v` has exactly one use and is not a graph output.
bool has_one_use(const Graph& g, const Value* v);
/// Re-infers the dtypes and shapes of n's outputs from its inputs' (and their
/// constant data); leaves them unchanged when n is malformed or inference fails.
void refresh_types(Node& n);
/// The data of `v` when it is a constant, else null (also for a null `v`).
const Tensor* constant_of(const Value* v);

}  // namespace ferry
