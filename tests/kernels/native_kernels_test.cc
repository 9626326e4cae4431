// Every row of backends/cpu/kernels.def that this CPU can run, against the
// reference kernel of its op, over shape sweeps (broadcasting patterns, odd
// sizes that leave vector tails, axes, permutations).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "backends/cpu/cpu_kernels.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct NativeCase {
  std::vector<Tensor> inputs;
  AttrMap attrs;
  std::string label;
};

std::vector<NativeCase> cases_for(Op op) {
  std::vector<NativeCase> cs;
  // Ops with attributes or inputs of several roles have their own sweeps: attention_f32_test.cc,
  // gelu_test.cc, rms_normalization_test.cc, quantize_kernels_test.cc.
  if (op == Op::Attention || op == Op::Gelu || op == Op::RMSNormalization) return cs;
  // Integer outputs (and inputs), compared exactly: quantize_kernels_test.cc.
  if (op == Op::QuantizeLinear || op == Op::DequantizeLinear) return cs;
  // Data movement, selection and casts over every dtype: data_movement_kernels_test.cc.
  if (op == Op::Split || op == Op::Expand || op == Op::Pad || op == Op::Cast || op == Op::Where || op == Op::Equal ||
      op == Op::Less || op == Op::LessOrEqual || op == Op::Greater || op == Op::GreaterOrEqual || op == Op::Reshape ||
      op == Op::Flatten || op == Op::Squeeze || op == Op::Unsqueeze || op == Op::Identity)
    return cs;
  const auto& sch = op_schema(op);
  if (op == Op::PRelu) {  // the slope broadcast to x: per channel, per last axis, scalar, whole
    uint32_t seed = 95;
    for (auto& [a, b] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
             {{1, 10, 28, 38}, {1, 10, 1, 1}}, {{4, 24, 24, 32}, {1, 1, 32}}, {{3, 17}, {}}, {{2, 5, 7}, {2, 5, 7}},
             {{6, 64}, {64}}})
      cs.push_back({{randn(a, seed++), randn(b, seed++)}, {}, ""});
    return cs;
  }
  if ((sch.min_inputs == 2 && op != Op::Gather && op != Op::Pow) || op == Op::Max || op == Op::Min) {  // binary with broadcasting
    std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
        {{37}, {37}},           {{1000}, {}},          {{}, {1000}},        {{3, 17}, {17}},
        {{3, 17}, {3, 1}},      {{2, 3, 4, 5}, {3, 1, 1}}, {{2, 1, 5}, {1, 4, 1}}, {{1, 8, 128, 128}, {1, 1, 1, 128}},
        {{40000}, {40000}},     {{64, 1024}, {64, 1}},  {{1}, {5, 1}},       {{4, 0, 3}, {3}}};
    uint32_t seed = 1;
    for (auto& [a, b] : shapes) {
      Tensor tb = randn(b, seed++);
      if (op == Op::Div)  // keep divisors away from 0
        for (int64_t i = 0; i < tb.numel(); ++i) tb.data<float>()[i] = 0.5f + std::fabs(tb.data<float>()[i]);
      cs.push_back({{randn(a, seed++), tb}, {}, ""});
    }
    if (op == Op::Max || op == Op::Min) {  // NaN on either side propagates
      Tensor a = randn({67}, 90), b = randn({67}, 91);
      for (int64_t i = 0; i < 67; i += 5) a.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
      for (int64_t i = 2; i < 67; i += 7) b.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
      cs.push_back({{a, b}, {}, "nan"});
    }
    return cs;
  }
  if (op == Op::Softmax) {
    for (auto [dims, axis] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
             {{7}, 0}, {{3, 129}, -1}, {{2, 12, 128, 128}, -1}, {{4, 5, 6}, 1}, {{4, 5, 6}, 0},
             {{1, 16, 4, 2100}, 1}, {{2, 3, 300}, 1}, {{3, 1, 257}, -2}}) {  // strided: lane chunks of 256 + a tail
      Tensor x = randn(dims, 7);
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 8.f;  // exercise the max shift
      cs.push_back({{x}, attrs({{"axis", axis}}), ""});
    }
    return cs;
  }
  if (op == Op::ReduceMean || op == Op::ReduceSum || op == Op::ReduceMax || op == Op::ReduceMin) {  // contiguous axis runs; others fall back to the reference
    struct R {
      std::vector<int64_t> dims, axes;
      int64_t keep;
    };
    uint32_t seed = 60;
    for (const R& r : std::vector<R>{{{2, 64, 7, 7}, {2, 3}, 1},
                                     {{2, 64, 7, 7}, {-1, -2}, 0},
                                     {{3, 50, 768}, {-1}, 1},
                                     {{3, 50, 300}, {1}, 0},
                                     {{4, 1, 5, 1, 6}, {1, 2, 3}, 1},
                                     {{2, 3, 4, 5}, {}, 0},
                                     {{2, 3, 4, 5}, {0, 2}, 1},
                                     {{1, 116, 14, 14}, {2, 3}, 0},
                                     {{9}, {0}, 1}}) {
      std::vector<Tensor> in{randn(r.dims, seed++)};
      if (!r.axes.empty()) in.push_back(Tensor::from_vector<int64_t>(r.axes, {int64_t(r.axes.size())}));
      cs.push_back({in, attrs({{"keepdims", r.keep}}), ""});
    }
    return cs;
  }
  if (op == Op::Pow) {  // f32 exponents: scalar 2 and 3, per-element; negative bases give NaN for fractions
    Tensor base = randn({3, 17, 5}, 70), e = randn({17, 1}, 71);
    for (float k : {2.f, 3.f, 0.5f}) {
      Tensor b = base.clone();
      if (k == 0.5f)
        for (int64_t i = 0; i < b.numel(); ++i) b.data<float>()[i] = std::fabs(b.data<float>()[i]);
      cs.push_back({{b, Tensor::scalar(k)}, {}, ""});
    }
    cs.push_back({{base, e}, {}, ""});
    return cs;
  }
  if (op == Op::Resize) {  // nearest by whole factors; the other cases fall back to the reference kernel
    struct Z {
      std::vector<int64_t> dims;
      std::vector<float> scales;  // empty: sizes
      std::vector<int64_t> sizes;
      const char* coord;
      const char* rounding;
      const char* mode;
    };
    uint32_t seed = 80;
    for (const Z& z : std::vector<Z>{
             {{1, 32, 4, 5}, {1, 1, 2, 2}, {}, "asymmetric", "floor", "nearest"},
             {{2, 3, 7, 6}, {}, {2, 3, 21, 12}, "half_pixel", "round_prefer_floor", "nearest"},
             {{1, 4, 5, 5}, {1, 1, 4, 1}, {}, "pytorch_half_pixel", "round_prefer_ceil", "nearest"},
             {{1, 4, 5, 5}, {1, 1, 2, 2}, {}, "asymmetric", "round_prefer_floor", "nearest"},  // falls back
             {{1, 4, 6, 6}, {1, 1, 1.5f, 1.5f}, {}, "asymmetric", "floor", "nearest"},          // falls back
             {{1, 4, 5, 5}, {1, 1, 2, 2}, {}, "half_pixel", "round_prefer_floor", "linear"},    // falls back
             {{3, 8, 8}, {}, {3, 16, 24}, "asymmetric", "floor", "nearest"}}) {
      std::vector<Tensor> in{randn(z.dims, seed++), Tensor::empty(DType::f32, {0})};
      if (!z.scales.empty()) {
        in.push_back(Tensor::from_vector<float>(z.scales, {int64_t(z.scales.size())}));
      } else {
        in.push_back(Tensor::empty(DType::f32, {0}));
        in.push_back(Tensor::from_vector<int64_t>(z.sizes, {int64_t(z.sizes.size())}));
      }
      cs.push_back({in, attrs({{"mode", std::string(z.mode)}, {"coordinate_transformation_mode", std::string(z.coord)},
                               {"nearest_mode", std::string(z.rounding)}}), ""});
    }
    return cs;
  }
  if (op == Op::Gather) {  // any axis; negative, repeated and scalar indices; i64 and i32
    struct G {
      std::vector<int64_t> data;
      std::vector<int64_t> idx_dims;
      int64_t axis;
      DType idx_type;
    };
    uint32_t seed = 40;
    for (const G& g : std::vector<G>{{{30522 / 64, 32}, {1, 7}, 0, DType::i64},
                                     {{1, 197, 64}, {}, 1, DType::i64},
                                     {{3, 4, 5, 6}, {2, 3}, 2, DType::i32},
                                     {{64, 1024}, {300}, 1, DType::i64},
                                     {{5, 7}, {4}, -1, DType::i64},
                                     {{2, 9}, {0}, 0, DType::i64}}) {
      const int64_t ax = g.axis < 0 ? g.axis + int64_t(g.data.size()) : g.axis;
      const int64_t dim = g.data[size_t(ax)];
      Tensor idx = Tensor::empty(g.idx_type, g.idx_dims);
      std::mt19937 rng(seed++);
      for (int64_t i = 0; i < idx.numel(); ++i) {
        const int64_t v = int64_t(rng() % uint32_t(2 * dim)) - dim;  // [-dim, dim)
        if (g.idx_type == DType::i64) idx.data<int64_t>()[i] = v;
        else idx.data<int32_t>()[i] = int32_t(v);
      }
      cs.push_back({{randn(g.data, seed++), idx}, attrs({{"axis", g.axis}}), ""});
    }
    return cs;
  }
  if (op == Op::Transpose) {
    for (auto [dims, perm] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
             {{3, 5}, {1, 0}}, {{1, 128, 12, 64}, {0, 2, 1, 3}}, {{2, 3, 4, 5}, {0, 2, 3, 1}},
             {{2, 3, 4}, {2, 1, 0}}, {{6}, {0}}, {{2, 3, 4, 5}, {3, 0, 1, 2}},
             // Swin's packed Q/K/V split: many chunks of rows, carries across every dim mid-chunk
             {{24, 49, 3, 3, 32}, {2, 0, 3, 1, 4}}, {{7, 300, 5, 3}, {1, 3, 0, 2}}})
      cs.push_back({{randn(dims, 3)}, attrs({{"perm", ints(perm)}}), ""});
    return cs;
  }
  // unary
  for (auto dims : std::vector<std::vector<int64_t>>{{1}, {15}, {17, 33}, {2, 64, 56, 56}, {0, 4}}) {
    Tensor x = randn(dims, 11);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 6.f;  // cover the saturating ranges
    if (op == Op::Sqrt)
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::fabs(x.data<float>()[i]);
    AttrMap a;
    if (op == Op::HardSigmoid) a = attrs({{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
    cs.push_back({{x}, a, ""});
  }
  return cs;
}

TEST(NativeKernels, EveryRowMatchesItsReferenceKernel) {
  register_cpu_kernels();
  int checked = 0;
  for (const KernelEntry& k : registered_kernels()) {
    if (k.isa > host_isa()) continue;  // the CPU cannot run it
    if (k.dtype != DType::f32) continue;  // the rows of other dtypes: data_movement_kernels_test.cc
    for (const NativeCase& c : cases_for(k.op)) {
      Graph g;
      Node* n = detail::build_one_node(g, k.op, c.inputs, c.attrs, 1, {});
      Status inferred = infer_shapes(g);
      ASSERT_TRUE(inferred.ok()) << k.name << ": " << inferred.to_string();
      std::map<std::string, Tensor> feeds;
      for (size_t i = 0; i < c.inputs.size(); ++i) feeds[detail::input_name(i)] = c.inputs[i];
      auto want = interpret(g, feeds);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      // The kernel must write every element: start from NaNs.
      std::vector<Tensor> outs{Tensor::empty(DType::f32, (*want)[0].dims())};
      for (int64_t i = 0; i < outs[0].numel(); ++i) outs[0].data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
      std::vector<const Tensor*> ins;
      for (const Tensor& t : c.inputs) ins.push_back(&t);
      KernelContext ctx(*n, ins, &outs);
      Status st = k.fn(ctx);
      ASSERT_TRUE(st.ok()) << k.name << ": " << st.to_string();
      std::string shapes;
      for (const Tensor& t : c.inputs) shapes += t.type_string() + " ";
      // Exact ops agree to float rounding; exp/erf-based ones to their approximation error.
      EXPECT_TRUE(close(outs[0], (*want)[0], 2e-6)) << k.name << " on " << shapes;
      ++checked;
      // In place: output aliasing input 0 gives the same result.
      if (k.in_place && c.inputs[0].dims() == (*want)[0].dims()) {
        std::vector<Tensor> alias{c.inputs[0].clone()};
        std::vector<const Tensor*> ins2 = ins;
        ins2[0] = &alias[0];
        KernelContext ctx2(*n, ins2, &alias);
        ASSERT_TRUE(k.fn(ctx2).ok());
        EXPECT_TRUE(close(alias[0], (*want)[0], 2e-6)) << k.name << " in place on " << shapes;
      }
    }
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace ferry::testing
