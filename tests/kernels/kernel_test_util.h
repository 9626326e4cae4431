// tests/kernels/kernel_test_util.h — compare a fast kernel (or a compiled
// session) with the reference interpreter on one op.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../ops/linalg_test_util.h"
#include "backends/cpu/cpu_session.h"
#include "backends/cpu/cpu_target.h"
#include "passes/pipeline.h"

namespace ferry::testing {

/// N(0,1)-ish f32 tensor from a seeded generator.
inline Tensor randn(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t = Tensor::empty(DType::f32, std::move(dims));
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

/// |got - want| <= rtol * max(1, |want|) elementwise; NaN matches NaN.
inline ::testing::AssertionResult close(const Tensor& got, const Tensor& want, double rtol) {
  if (got.dims() != want.dims() || got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << "got " << got.type_string() << ", want " << want.type_string();
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.get_double(i), w = want.get_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (!(std::fabs(g - w) <= rtol * std::max(1.0, std::fabs(w))))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

/// One graph through the whole path: the reference interpreter's outputs, the CPU
/// session's plan for the feeds' dims and its outputs (of the last of `reps` runs).
struct SessionRun {
  std::vector<Tensor> want;  ///< reference interpreter on the unoptimized graph
  std::vector<Tensor> got;   ///< CPU session on the optimized graph
  PlanInfo plan;
  std::string plan_text;     ///< "\n  Op kernel" per step, for failure messages
  /// The steps of op `op` (as the plan names it).
  std::vector<const StepInfo*> steps_of(const std::string& op) const {
    std::vector<const StepInfo*> v;
    for (const StepInfo& s : plan.steps)
      if (s.op == op) v.push_back(&s);
    return v;
  }
  /// The steps that run a reference kernel (ours, or oneDNN's ref:any).
  std::vector<const StepInfo*> reference_steps() const {
    std::vector<const StepInfo*> v;
    for (const StepInfo& s : plan.steps)
      if (s.reference) v.push_back(&s);
    return v;
  }
};

/// build -> infer_shapes -> interpret -> optimize(cpu) -> compile -> plan -> run (`reps` times).
/// `build` adds the inputs (named as in `feeds`), nodes and outputs to an empty graph.
inline ::testing::AssertionResult run_session(const std::function<void(Graph&)>& build,
                                              const std::map<std::string, Tensor>& feeds, const SessionOptions& options,
                                              SessionRun* out, int reps = 2) {
  auto g = std::make_unique<Graph>();
  build(*g);
  if (Status st = infer_shapes(*g); !st.ok()) return ::testing::AssertionFailure() << "infer_shapes: " << st.to_string();
  auto want = interpret(*g, feeds);
  if (!want.ok()) return ::testing::AssertionFailure() << "interpret: " << want.status().to_string();
  out->want = std::move(want).value();
  std::vector<std::vector<int64_t>> dims;
  for (const Value* v : g->inputs()) {
    auto it = feeds.find(v->name());
    if (it == feeds.end()) return ::testing::AssertionFailure() << "no feed for input '" << v->name() << "'";
    dims.push_back(it->second.dims());
  }
  if (Status st = optimize(*g, cpu_target(), {}, nullptr); !st.ok())
    return ::testing::AssertionFailure() << "optimize: " << st.to_string();
  auto s = CpuSession::compile(std::move(g), options);
  if (!s.ok()) return ::testing::AssertionFailure() << "compile: " << s.status().to_string();
  auto info = (*s)->plan_info(dims);
  if (!info.ok()) return ::testing::AssertionFailure() << "plan: " << info.status().to_string();
  out->plan = std::move(info).value();
  out->plan_text.clear();
  for (const StepInfo& st : out->plan.steps) out->plan_text += "\n  " + st.op + " " + st.kernel;
  for (int rep = 0; rep < reps; ++rep) {
    auto got = (*s)->run(feeds);
    if (!got.ok()) return ::testing::AssertionFailure() << "run: " << got.status().to_string() << out->plan_text;
    out->got = std::move(got).value();
  }
  return ::testing::AssertionSuccess();
}

/// run_session with blocked layouts on or off.
inline ::testing::AssertionResult run_session(const std::function<void(Graph&)>& build,
                                              const std::map<std::string, Tensor>& feeds, bool blocked,
                                              SessionRun* out, int reps = 2) {
  SessionOptions o;
  o.blocked_layouts = blocked;
  return run_session(build, feeds, o, out, reps);
}

/// Every output of `r` within `rtol` of the reference.
inline ::testing::AssertionResult outputs_close(const SessionRun& r, double rtol) {
  if (r.got.size() != r.want.size())
    return ::testing::AssertionFailure() << r.got.size() << " outputs, want " << r.want.size();
  for (size_t i = 0; i < r.got.size(); ++i)
    if (auto c = close(r.got[i], r.want[i], rtol); !c) return c << " (output " << i << ")" << r.plan_text;
  return ::testing::AssertionSuccess();
}

/// A 1-D int64 tensor of `v`.
inline Tensor i64s(const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>(v, {int64_t(v.size())}); }

}  // namespace ferry::testing
