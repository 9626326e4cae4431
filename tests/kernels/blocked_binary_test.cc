// Elementwise binary ops beside a blocked activation (nChw8c / nChw16c after a conv
// and a pool): a scalar or per-channel constant (how BatchNorm and HardSwish arrive
// from PaddlePaddle / YOLO exporters), a computed [N,C,1,1] gate, a plain residual
// input. Each must match the reference interpreter and run on a fast implementation:
// oneDNN's jit binary with the second operand in the first one's format, or ferry's own
// kernel on plain layouts — never oneDNN's ref:any (~35 ms per op) nor ferry's
// reference kernel.
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

enum class Rhs { kScalar, kPerChannel4d, kPerChannel3d, kPerChannel1d, kResidualInput, kGate };

struct BinCase {
  Op op;
  Rhs rhs;
  bool rhs_first;  // the broadcast operand is input 0
  int64_t channels;
  bool pool = true;  // conv 3x3 + MaxPool (nChw8c / nChw16c); else conv 1x1 + Relu, which
                     // AVX-512 oneDNN (brgconv) writes in nhwc (acdb)
};

std::string rhs_name(Rhs r) {
  switch (r) {
    case Rhs::kScalar: return "scalar";
    case Rhs::kPerChannel4d: return "[1,C,1,1]";
    case Rhs::kPerChannel3d: return "[C,1,1]";
    case Rhs::kPerChannel1d: return "[W]";
    case Rhs::kResidualInput: return "plain residual";
    case Rhs::kGate: return "gate";
  }
  return "?";
}

TEST(BlockedBinary, ConstantsGatesAndResidualsStayFast) {
  const Op ops[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Max, Op::Min};
  const Rhs rhss[] = {Rhs::kScalar, Rhs::kPerChannel4d, Rhs::kPerChannel3d, Rhs::kPerChannel1d, Rhs::kResidualInput,
                      Rhs::kGate};
  std::vector<BinCase> cases;
  for (int64_t c : {16, 30})  // whole blocks; a padded last block
    for (Op op : ops)
      for (Rhs r : rhss)
        for (bool first : {false, true})
          if (!(first && op == Op::Div)) cases.push_back({op, r, first, c});  // no division by a feature map
  for (Op op : ops)  // the nhwc lead: a scalar is spread over the channels into a plain-format copy
    for (Rhs r : {Rhs::kScalar, Rhs::kPerChannel4d}) cases.push_back({op, r, false, 30, false});
  uint32_t seed = 300;
  for (const BinCase& bc : cases) {
    const int64_t C = bc.channels, H = 9, W = 7;
    Tensor x = randn({2, 5, H, W}, seed++), w = randn({C, 5, 3, 3}, seed++), b = randn({C}, seed++);
    Tensor w1 = randn({C, 5, 1, 1}, seed++);
    Tensor res = randn({2, C, H, W}, seed++);
    Tensor k;
    switch (bc.rhs) {
      case Rhs::kScalar: k = Tensor::scalar(1.75f); break;
      case Rhs::kPerChannel4d: k = randn({1, C, 1, 1}, seed++); break;
      case Rhs::kPerChannel3d: k = randn({C, 1, 1}, seed++); break;
      case Rhs::kPerChannel1d: k = randn({W}, seed++); break;
      default: break;
    }
    // Divisors away from 0.
    if (bc.op == Op::Div && k.numel() > 0)
      for (int64_t i = 0; i < k.numel(); ++i) k.data<float>()[i] = 1.5f + std::fabs(k.data<float>()[i]);
    if (bc.op == Op::Div && bc.rhs == Rhs::kResidualInput)
      for (int64_t i = 0; i < res.numel(); ++i) res.data<float>()[i] = 1.5f + std::fabs(res.data<float>()[i]);
    std::map<std::string, Tensor> feeds{{"x", x}};
    if (bc.rhs == Rhs::kResidualInput) feeds["r"] = res;
    auto build = [&](Graph& g) {
      Value* xv = g.add_input("x", DType::f32, x.shape());
      Value* y = nullptr;
      if (bc.pool) {
        y = g.add_node(Op::Conv, {xv, g.add_constant("w", w), g.add_constant("b", b)}, 1,
                       attrs({{"pads", ints({1, 1, 1, 1})}}), "conv")->output(0);
        // A pool keeps the conv's blocked layout and stops the optimizer folding the constant into the conv.
        y = g.add_node(Op::MaxPool, {y}, 1,
                       attrs({{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}}), "pool")->output(0);
      } else {  // the Relu (a conv post-op) keeps the constant out of the conv
        y = g.add_node(Op::Conv, {xv, g.add_constant("w", w1), g.add_constant("b", b)}, 1, {}, "conv")->output(0);
        y = g.add_node(Op::Relu, {y}, 1, {}, "relu")->output(0);
      }
      Value* other = nullptr;
      if (bc.rhs == Rhs::kResidualInput) {
        other = g.add_input("r", DType::f32, res.shape());
      } else if (bc.rhs == Rhs::kGate) {
        Value* gap = g.add_node(Op::GlobalAveragePool, {y}, 1, {}, "gap")->output(0);
        other = g.add_node(Op::Sigmoid, {gap}, 1, {}, "gate")->output(0);
      } else {
        other = g.add_constant("k", k);
      }
      std::vector<Value*> in = bc.rhs_first ? std::vector<Value*>{other, y} : std::vector<Value*>{y, other};
      Value* out = g.add_node(bc.op, in, 1, {}, "bin")->output(0);
      g.set_outputs({out});
    };
    const std::string label = std::string(op_name(bc.op)) + " C=" + std::to_string(C) + " with " + rhs_name(bc.rhs) +
                              (bc.rhs_first ? " first" : " second") + (bc.pool ? "" : " after conv 1x1 + Relu");
    for (bool blocked : {true, false}) {
      SessionRun r;
      ASSERT_TRUE(run_session(build, feeds, blocked, &r)) << label;
      for (const StepInfo& st : r.plan.steps) {
        EXPECT_FALSE(st.reference) << label << (blocked ? " blocked" : " plain") << ": a reference step" << r.plan_text;
        EXPECT_EQ(st.kernel.find("[ref"), std::string::npos) << label << ": oneDNN reference impl" << r.plan_text;
      }
      EXPECT_TRUE(outputs_close(r, 1e-5)) << label << (blocked ? " blocked" : " plain");
    }
  }
}

}  // namespace
}  // namespace ferry::testing
