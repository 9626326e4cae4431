// tests/passes/pass_test_util.h — text IR in, text IR out, and "optimized == unoptimized",
// for the pass tests that need C++ (most are .ir files: ir_check.h).
//
//   PassStats stats;
//   std::string out = rewrite(R"(graph g (%x: f32[2]) -> (%y) {
//     %y = Identity(%x) @id
//   })", eliminate_identity, &stats);
//
// rewrite() parses and shape-infers the text twice, runs the pass on one copy,
// verifies it, checks with the reference interpreter that both copies compute
// the same outputs on seeded random inputs, and returns the rewritten graph
// printed without provenance (so expected strings stay short).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "ir/text_format.h"
#include "ir/verifier.h"
#include "ops/shape_inference.h"
#include "passes/passes.h"
#include "runtime/interpreter.h"
#include "runtime/random_inputs.h"

namespace ferry::testing {

using PassFunction = std::function<Status(Graph&, PassStats&)>;

/// Parses, verifies and shape-infers text IR; an empty graph (and a test failure) on error.
inline std::unique_ptr<Graph> parse_ir(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string() << "\n" << text;
  if (!g.ok()) return std::make_unique<Graph>();
  Status st = verify(**g);
  EXPECT_TRUE(st.ok()) << st.to_string();
  st = infer_shapes(**g);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return std::move(g).value();
}

/// The graph as text without provenance.
inline std::string ir(const Graph& g) {
  PrintOptions o;
  o.show_provenance = false;
  return print_graph(g, o);
}

/// Runs both graphs in the reference interpreter on the same seeded inputs and
/// expects the same outputs: names, dtypes, shapes, and values within
/// |a - b| <= rtol * max(1, |b|) (NaN matches NaN, inf matches inf).
inline void expect_same_outputs(const Graph& before, const Graph& after, double rtol = 1e-6, uint64_t seed = 7) {
  RandomInputOptions ro;
  ro.seed = seed;
  auto inputs = make_inputs(before, {}, ro);
  ASSERT_TRUE(inputs.ok()) << inputs.status().to_string();
  auto want = interpret(before, *inputs);
  ASSERT_TRUE(want.ok()) << "unoptimized graph: " << want.status().to_string();
  auto got = interpret(after, *inputs);
  ASSERT_TRUE(got.ok()) << "optimized graph: " << got.status().to_string() << "\n" << ir(after);
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    const Tensor &a = (*got)[i], &b = (*want)[i];
    EXPECT_EQ(after.outputs()[i]->name(), before.outputs()[i]->name()) << "output " << i << " was renamed";
    ASSERT_EQ(a.dtype(), b.dtype()) << "output " << i;
    ASSERT_EQ(a.dims(), b.dims()) << "output " << i;
    for (int64_t k = 0; k < a.numel(); ++k) {
      double x = a.get_double(k), y = b.get_double(k);
      if (x == y || (std::isnan(x) && std::isnan(y))) continue;  // also inf == inf
      ASSERT_LE(std::fabs(x - y), rtol * std::max(1.0, std::fabs(y)))
          << "output " << i << " element " << k << ": optimized " << x << ", unoptimized " << y;
    }
  }
}

/// Runs `pass` on `text` (see the file comment); returns the result as text.
inline std::string rewrite(const std::string& text, const PassFunction& pass, PassStats* stats = nullptr,
                           double rtol = 1e-6) {
  std::unique_ptr<Graph> before = parse_ir(text), after = parse_ir(text);
  PassStats local;
  Status st = pass(*after, stats ? *stats : local);
  EXPECT_TRUE(st.ok()) << st.to_string();
  st = verify(*after);
  EXPECT_TRUE(st.ok()) << st.to_string() << "\n" << ir(*after);
  st = infer_shapes(*after);
  EXPECT_TRUE(st.ok()) << st.to_string() << "\n" << ir(*after);
  expect_same_outputs(*before, *after, rtol);
  return ir(*after);
}

/// The nodes of op `op` in `g`.
inline int count_ops(const Graph& g, Op op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

/// Occurrences of `needle` in `text` (nodes of an op: count(out, "= Conv(")).
inline int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// stats[pass][pattern] or zeros.
inline PatternStats stats_of(const PassStats& stats, const std::string& pass, const std::string& pattern) {
  auto p = stats.find(pass);
  if (p == stats.end()) return {};
  auto q = p->second.find(pattern);
  return q == p->second.end() ? PatternStats{} : q->second;
}

}  // namespace ferry::testing
