// The bf16 Conv / MatMul steps (cpu_schedule.cc try_bf16, onednn_steps.h with a bf16
// operand 0): a graph optimized for the CPU, its nodes put at bf16 by the precision pass
// with the CPU target's column (cpu_precision.h), lowered by emulate_precision.h
// (accelerated nodes read Cast(Cast(x, bf16), f32) and rounded weights), then
//   * the CPU session runs each Conv / MatMul as one oneDNN bf16 step (the plan says so,
//     no Cast step is left),
//   * its outputs equal the reference interpreter's on the same lowered graph (fp32
//     kernels on the rounded numbers) up to the summation order,
//   * and differ from the fp32 model by a bf16-sized error (not zero: the rounding happened);
//   * a step whose readers are all bf16 steps writes bf16 (chains), the others f32.
// Shapes: 1x1, 3x3, strided, grouped, depthwise, padded, bias, fused Relu, residual sum;
// MatMul 2-D, batched, M = 1, odd K / N, rank-3 constant B, bias, residual.
// Skipped (with the reason) where the host's CPU target does not accelerate bf16.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/cpu/cpu_precision.h"
#include "ir/graph_clone.h"
#include "kernel_test_util.h"
#include "passes/assign_precision.h"
#include "precision/emulate_precision.h"

namespace ferry::testing {
namespace {

bool host_accelerates_bf16(std::string* why) {
  const PrecisionSupport s = cpu_precisions(host_isa()).of(DType::bf16);
  *why = s.why;
  return s.exec == PrecisionExec::accelerated;
}

/// max |a - b| and max |b| over two tensors of the same shape.
std::pair<double, double> bf16_test_diff(const Tensor& a, const Tensor& b) {
  double d = 0, m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    d = std::max(d, std::fabs(a.get_double(i) - b.get_double(i)));
    m = std::max(m, std::fabs(b.get_double(i)));
  }
  return {d, m};
}

/// Builds, lowers to bf16 and runs `build` on the CPU (blocked and plain layouts); checks
/// the steps (Conv / FusedConv or MatMul / FusedMatMul, each named *_bf16*) and the numbers
/// as the file comment says.
void check_bf16(const std::string& label, const std::function<void(Graph&)>& build,
                const std::map<std::string, Tensor>& feeds, bool conv, int bf16_outputs = 0, double rtol = 1e-4,
                std::vector<StepInfo>* blocked_steps = nullptr, const std::string& mode = "bf16") {
  auto is_product = [&](const std::string& op) {
    return conv ? op == "Conv" || op == "FusedConv" : op == "MatMul" || op == "FusedMatMul";
  };
  for (bool blocked : {true, false}) {
    const std::string what = label + (blocked ? " blocked" : " plain");
    auto g = std::make_unique<Graph>();
    build(*g);
    ASSERT_TRUE(infer_shapes(*g).ok()) << what;
    auto fp32 = interpret(*g, feeds);
    ASSERT_TRUE(fp32.ok()) << what << ": " << fp32.status().to_string();
    ASSERT_TRUE(optimize(*g, cpu_target(), {}, nullptr).ok()) << what;
    const TargetPrecisions t = cpu_precisions(host_isa());
    auto report = assign_precision(*g, t, {.mode = mode});
    ASSERT_TRUE(report.ok()) << what << ": " << report.status().to_string();
    int accelerated = 0;
    for (const NodePrecision& n : report->nodes)
      if (is_product(n.op)) {
        ++accelerated;
        EXPECT_EQ(n.exec, "accelerated") << what << ": " << n.node << ": " << n.reason;
        EXPECT_NE(n.reason.find("bf16 accelerated (oneDNN bf16 steps"), std::string::npos) << n.reason;
      }
    ASSERT_GT(accelerated, 0) << what << ": no matrix product in the optimized graph";
    ASSERT_TRUE(lower_emulated_precision(*g, lowered_nodes(*report), t).ok()) << what;
    auto want = interpret(*g, feeds);  // fp32 kernels on the rounded inputs and weights
    ASSERT_TRUE(want.ok()) << what << ": " << want.status().to_string();
    std::vector<std::vector<int64_t>> dims;
    for (const Value* v : g->inputs()) dims.push_back(feeds.at(v->name()).dims());
    SessionOptions o;
    o.blocked_layouts = blocked;
    auto s = CpuSession::compile(std::move(g), o);
    ASSERT_TRUE(s.ok()) << what << ": " << s.status().to_string();
    auto plan = (*s)->plan_info(dims);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    std::string text;
    int bf16_steps = 0, bf16_written = 0;
    for (const StepInfo& st : plan->steps) {
      text += "\n  " + st.op + " " + st.kernel;
      if (is_product(st.op)) bf16_steps += st.kernel.find("_bf16") != std::string::npos;
      if (is_product(st.op)) bf16_written += st.shapes.find("-> bf16[") != std::string::npos;
      EXPECT_FALSE(st.op == "Cast" && st.nodes.find("/x_to_") != std::string::npos)
          << what << ": the input rounding " << st.nodes << " runs instead of the bf16 step's reorder";
    }
    if (blocked && blocked_steps) *blocked_steps = plan->steps;
    EXPECT_EQ(bf16_steps, accelerated) << what << text;
    if (bf16_outputs >= 0 || blocked) {  // < 0: counted for the blocked layout only (as -bf16_outputs)
      EXPECT_EQ(bf16_written, std::abs(bf16_outputs)) << what << ": steps writing bf16 for bf16 readers" << text;
    }
    for (int rep = 0; rep < 2; ++rep) {
      auto got = (*s)->run(feeds);
      ASSERT_TRUE(got.ok()) << what << ": " << got.status().to_string() << text;
      ASSERT_EQ(got->size(), want->size());
      for (size_t i = 0; i < got->size(); ++i) {
        EXPECT_TRUE(close((*got)[i], (*want)[i], rtol)) << what << " vs the emulation" << text;
        auto [err, scale] = bf16_test_diff((*got)[i], (*fp32)[i]);
        EXPECT_LE(err, 2e-2 * scale) << what << ": bf16 error against fp32";
        EXPECT_GT(err, 0.0) << what << ": bit-equal to fp32, nothing was rounded";
      }
    }
  }
}

/// The blocked plan `steps` has a step whose kernel names `kernel` writing bf16, and no reorder
/// of `f32_value` (its f32 type, "f32[2,48,8,8]") into bf16: the bf16 readers read that step's output.
void expect_writes_bf16(const std::vector<StepInfo>& steps, const std::string& kernel, const std::string& f32_value) {
  std::string text;
  bool writes = false;
  for (const StepInfo& st : steps) {
    text += "\n  " + st.op + " " + st.kernel + " " + st.shapes;
    writes |= st.kernel.find(kernel) != std::string::npos && st.shapes.find("-> bf16[") != std::string::npos;
    EXPECT_FALSE(st.op == "Reorder" && st.shapes.find(f32_value + " -> bf16") != std::string::npos)
        << f32_value << " is reordered into bf16" << text;
  }
  EXPECT_TRUE(writes) << "no " << kernel << " step writes bf16" << text;
}

struct Bf16ConvCase {
  std::vector<int64_t> x, w;
  int64_t group;
  std::vector<int64_t> strides, pads;
  bool bias, relu, residual;
};

TEST(OnednnBf16Steps, ConvSweep) {
  std::string why;
  if (!host_accelerates_bf16(&why)) GTEST_SKIP() << "this host's CPU target does not run bf16 on hardware: " << why;
  if (std::find(cpu_precisions(host_isa()).of(DType::bf16).accelerated_ops.begin(),
                cpu_precisions(host_isa()).of(DType::bf16).accelerated_ops.end(),
                Op::Conv) == cpu_precisions(host_isa()).of(DType::bf16).accelerated_ops.end())
    GTEST_SKIP() << "oneDNN has no jit / brgemm bf16 convolution here: " << why;
  const std::vector<Bf16ConvCase> cases = {
      {{1, 16, 14, 14}, {32, 16, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, false, false, false},  // 1x1
      {{2, 32, 12, 12}, {32, 32, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, true, true, false},    // 3x3 padded, bias, relu
      {{1, 24, 15, 15}, {48, 24, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, true, false, false},   // strided
      {{1, 32, 9, 9}, {64, 8, 3, 3}, 4, {1, 1}, {1, 1, 1, 1}, false, true, false},      // grouped
      {{1, 48, 10, 10}, {48, 1, 3, 3}, 48, {1, 1}, {1, 1, 1, 1}, true, true, false},    // depthwise
      {{1, 40, 7, 7}, {40, 40, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, true, true, true},       // residual sum + relu
      {{1, 3, 17, 19}, {8, 3, 7, 7}, 1, {2, 2}, {3, 3, 3, 3}, true, false, false},      // 7x7 s2 stem, 3 channels
  };
  uint32_t seed = 300;
  for (const Bf16ConvCase& c : cases) {
    Tensor x = randn(c.x, seed++), w = randn(c.w, seed++), b = randn({c.w[0]}, seed++);
    std::map<std::string, Tensor> feeds{{"x", x}};
    auto conv_attrs = [&] { return attrs({{"group", c.group}, {"strides", ints(c.strides)}, {"pads", ints(c.pads)}}); };
    if (c.residual) {
      Graph probe;
      Node* n = probe.add_node(Op::Conv, {probe.add_input("x", DType::f32, x.shape()), probe.add_constant("w", w)}, 1,
                               conv_attrs());
      probe.set_outputs({n->output(0)});
      ASSERT_TRUE(infer_shapes(probe).ok());
      feeds["r"] = randn(n->output(0)->shape().static_dims(), seed++);
    }
    auto build = [&](Graph& g) {
      std::vector<Value*> ins{g.add_input("x", DType::f32, x.shape()), g.add_constant("w", w)};
      if (c.bias) ins.push_back(g.add_constant("b", b));
      Value* y = g.add_node(Op::Conv, ins, 1, conv_attrs(), "conv")->output(0);
      if (c.residual)
        y = g.add_node(Op::Add, {y, g.add_input("r", DType::f32, Shape::from_dims(feeds.at("r").dims()))}, 1, {}, "add")
                ->output(0);
      if (c.relu) y = g.add_node(Op::Relu, {y}, 1, {}, "relu")->output(0);
      g.set_outputs({y});
    };
    check_bf16("conv x " + x.type_string() + " w " + w.type_string() + " group " + std::to_string(c.group), build,
               feeds, true);
  }
}

TEST(OnednnBf16Steps, MatMulSweep) {
  std::string why;
  if (!host_accelerates_bf16(&why)) GTEST_SKIP() << "this host's CPU target does not run bf16 on hardware: " << why;
  struct MM {
    std::vector<int64_t> a, b;
    bool bias, residual;
  };
  const std::vector<MM> cases = {{{7, 33}, {33, 5}, false, false},           // 2-D, odd K / N
                                 {{2, 16, 64}, {64, 96}, true, true},        // batched A, bias, residual
                                 {{1, 64}, {64, 128}, true, false},          // M = 1
                                 {{5, 37}, {37, 19}, true, false},           // odd
                                 {{2, 8, 12}, {2, 12, 6}, false, false}};    // rank-3 constant B
  uint32_t seed = 400;
  for (const MM& c : cases) {
    Tensor a = randn(c.a, seed++), b = randn(c.b, seed++), bias = randn({c.b.back()}, seed++);
    std::vector<int64_t> out = c.a;
    out.back() = c.b.back();
    if (c.b.size() == 3) out = {c.b[0], c.a[1], c.b[2]};
    std::map<std::string, Tensor> feeds{{"a", a}};
    if (c.residual) feeds["r"] = randn(out, seed++);
    auto build = [&](Graph& g) {
      Value* y = g.add_node(Op::MatMul, {g.add_input("a", DType::f32, a.shape()), g.add_constant("b", b)}, 1, {}, "mm")
                     ->output(0);
      if (c.bias) y = g.add_node(Op::Add, {y, g.add_constant("bias", bias)}, 1, {}, "bias")->output(0);
      if (c.residual) y = g.add_node(Op::Add, {y, g.add_input("r", DType::f32, Shape::from_dims(out))}, 1, {}, "res")->output(0);
      g.set_outputs({y});
    };
    check_bf16("matmul a " + a.type_string() + " b " + b.type_string(), build, feeds, false);
  }
}

// A bf16 step whose readers are all bf16 steps writes bf16 (what they would round it to): no
// f32 -> bf16 reorder between them. A residual read (f32) or a graph output keeps f32.
TEST(OnednnBf16Steps, ChainsWriteBf16BetweenSteps) {
  std::string why;
  if (!host_accelerates_bf16(&why)) GTEST_SKIP() << "this host's CPU target does not run bf16 on hardware: " << why;
  const PrecisionSupport s = cpu_precisions(host_isa()).of(DType::bf16);
  if (std::find(s.accelerated_ops.begin(), s.accelerated_ops.end(), Op::Conv) != s.accelerated_ops.end()) {
    Tensor x = randn({1, 16, 12, 12}, 500), w1 = randn({32, 16, 3, 3}, 501), b1 = randn({32}, 502),
           wd = randn({32, 1, 3, 3}, 503), w2 = randn({24, 32, 1, 1}, 504);
    auto build = [&](Graph& g) {
      Value* y = g.add_node(Op::Conv, {g.add_input("x", DType::f32, x.shape()), g.add_constant("w1", w1), g.add_constant("b1", b1)},
                            1, attrs({{"pads", ints({1, 1, 1, 1})}}), "c1")->output(0);
      y = g.add_node(Op::Relu, {y}, 1, {}, "r1")->output(0);
      y = g.add_node(Op::Conv, {y, g.add_constant("wd", wd)}, 1,
                     attrs({{"group", int64_t(32)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}), "dw")
              ->output(0);
      y = g.add_node(Op::Conv, {y, g.add_constant("w2", w2)}, 1, {}, "pw")->output(0);
      g.set_outputs({y});
    };
    check_bf16("conv chain", build, {{"x", x}}, true, 2);  // c1 and dw write bf16, pw (the output) f32
  }
  Tensor a = randn({2, 8, 48}, 510), m1 = randn({48, 96}, 511), c1 = randn({96}, 512), m2 = randn({96, 40}, 513);
  auto build = [&](Graph& g) {
    Value* y = g.add_node(Op::MatMul, {g.add_input("a", DType::f32, a.shape()), g.add_constant("m1", m1)}, 1, {}, "mm1")
                   ->output(0);
    y = g.add_node(Op::Add, {y, g.add_constant("c1", c1)}, 1, {}, "bias")->output(0);
    y = g.add_node(Op::Relu, {y}, 1, {}, "relu")->output(0);
    y = g.add_node(Op::MatMul, {y, g.add_constant("m2", m2)}, 1, {}, "mm2")->output(0);
    g.set_outputs({y});
  };
  check_bf16("matmul chain", build, {{"a", a}}, false, 1);
}

// A residual stream between bf16 steps is stored in bf16 too (emulate_precision.h: every reader
// of Z rounds it): two ResNet-style blocks y1 = relu(conv(relu(conv(y0))) + y0), y2 likewise.
// The stem, the blocks' first convs and the first block's output (a sum post-op into a bf16
// destination, Z read from its bf16 slot) write bf16; the second block's output (the graph
// output) writes f32, its Z read widened. Before, every Z read was f32: two steps wrote bf16.
// Counted in the blocked layout: in plain ones without AMX oneDNN's gemm kernel declines the
// bf16 sum (it would round twice) and the block writes f32, reading Z widened. Tolerance 4e-3 of
// max(1, |y|): Z is a computed value rounded to bf16 and added to y as it is, so where the f32
// summation order moves it across a rounding boundary y moves by one bf16 step (2^-8 of Z).
TEST(OnednnBf16Steps, ResidualStreamStaysBf16) {
  std::string why;
  if (!host_accelerates_bf16(&why)) GTEST_SKIP() << "this host's CPU target does not run bf16 on hardware: " << why;
  const PrecisionSupport s = cpu_precisions(host_isa()).of(DType::bf16);
  if (std::find(s.accelerated_ops.begin(), s.accelerated_ops.end(), Op::Conv) == s.accelerated_ops.end())
    GTEST_SKIP() << "the CPU target runs no bf16 Conv here: " << s.why;
  Tensor x = randn({2, 8, 10, 10}, 520), w0 = randn({32, 8, 3, 3}, 521), b0 = randn({32}, 522);
  std::vector<Tensor> wa, wb;
  for (int k = 0; k < 2; ++k) {
    wa.push_back(randn({16, 32, 1, 1}, 523 + 2 * k));
    wb.push_back(randn({32, 16, 3, 3}, 524 + 2 * k));
  }
  auto build = [&](Graph& g) {
    Value* y = g.add_node(Op::Conv, {g.add_input("x", DType::f32, x.shape()), g.add_constant("w0", w0), g.add_constant("b0", b0)},
                          1, attrs({{"pads", ints({1, 1, 1, 1})}}), "stem")->output(0);
    y = g.add_node(Op::Relu, {y}, 1, {}, "stem_relu")->output(0);
    for (int k = 0; k < 2; ++k) {
      const std::string b = "block" + std::to_string(k);
      Value* a = g.add_node(Op::Conv, {y, g.add_constant(b + "_wa", wa[size_t(k)])}, 1, {}, b + "_a")->output(0);
      a = g.add_node(Op::Relu, {a}, 1, {}, b + "_a_relu")->output(0);
      Value* c = g.add_node(Op::Conv, {a, g.add_constant(b + "_wb", wb[size_t(k)])}, 1,
                            attrs({{"pads", ints({1, 1, 1, 1})}}), b + "_b")->output(0);
      c = g.add_node(Op::Add, {c, y}, 1, {}, b + "_sum")->output(0);
      y = g.add_node(Op::Relu, {c}, 1, {}, b + "_relu")->output(0);
    }
    g.set_outputs({y});
  };
  check_bf16("residual stream", build, {{"x", x}}, true, -4, 4e-3);
}

// DenseNet's concat, batch-norm affine and ReLU before a bf16 1x1 conv: the concat step applies
// the affine as it copies (try_concat_affine) and, its only reader being the bf16 conv, writes
// bf16 (rounded as the conv's input Cast would): no f32 -> bf16 reorder in front of the conv.
// (The graph input x is reordered into bf16 for the first convs, as always.)
TEST(OnednnBf16Steps, ConcatAffineWritesBf16ForABf16Reader) {
  std::string why;
  if (!host_accelerates_bf16(&why)) GTEST_SKIP() << "this host's CPU target does not run bf16 on hardware: " << why;
  Tensor x = randn({2, 16, 8, 8}, 530), wa = randn({16, 16, 3, 3}, 531), wb = randn({32, 16, 1, 1}, 532),
         sc = randn({1, 48, 1, 1}, 533), sh = randn({1, 48, 1, 1}, 534), wc = randn({24, 48, 1, 1}, 535);
  auto build = [&](Graph& g) {
    Value* in = g.add_input("x", DType::f32, x.shape());
    Value* a = g.add_node(Op::Conv, {in, g.add_constant("wa", wa)}, 1, attrs({{"pads", ints({1, 1, 1, 1})}}), "a")->output(0);
    Value* b = g.add_node(Op::Conv, {in, g.add_constant("wb", wb)}, 1, {}, "b")->output(0);
    Value* y = g.add_node(Op::Concat, {a, b}, 1, attrs({{"axis", int64_t(1)}}), "cat")->output(0);
    y = g.add_node(Op::Mul, {y, g.add_constant("sc", sc)}, 1, {}, "bn_scale")->output(0);
    y = g.add_node(Op::Add, {y, g.add_constant("sh", sh)}, 1, {}, "bn_shift")->output(0);
    y = g.add_node(Op::Relu, {y}, 1, {}, "relu")->output(0);
    y = g.add_node(Op::Conv, {y, g.add_constant("wc", wc)}, 1, {}, "c")->output(0);
    g.set_outputs({y});
  };
  std::vector<StepInfo> steps;
  // `auto`: the products bf16, the concat and its affine fp32 (nothing faster), as in DenseNet.
  check_bf16("concat affine", build, {{"x", x}}, true, 0, 1e-4, &steps, "auto");
  expect_writes_bf16(steps, "concat_affine", "f32[2,48,8,8]");
}

// A squeeze-excitation block before a bf16 projection (MobileNetV3, EfficientNet, RegNetY):
// x * sigmoid(fc(pool(x))) is written in bf16 by ferry's channel scale (oneDNN's binary has no
// jit kernel from f32 into bf16), rounded as the projection's input Cast would: no reorder
// into bf16 in front of the projection.
TEST(OnednnBf16Steps, GateProductWritesBf16ForABf16Reader) {
  std::string why;
  if (!host_accelerates_bf16(&why)) GTEST_SKIP() << "this host's CPU target does not run bf16 on hardware: " << why;
  Tensor x = randn({2, 24, 7, 7}, 540), w0 = randn({32, 24, 1, 1}, 541), w1 = randn({8, 32, 1, 1}, 542),
         w2 = randn({32, 8, 1, 1}, 543), wp = randn({16, 32, 1, 1}, 544);
  auto build = [&](Graph& g) {
    Value* in = g.add_input("x", DType::f32, x.shape());
    Value* a = g.add_node(Op::Conv, {in, g.add_constant("w0", w0)}, 1, {}, "expand")->output(0);
    a = g.add_node(Op::Relu, {a}, 1, {}, "expand_relu")->output(0);
    Value* s = g.add_node(Op::GlobalAveragePool, {a}, 1, {}, "pool")->output(0);
    s = g.add_node(Op::Conv, {s, g.add_constant("w1", w1)}, 1, {}, "fc1")->output(0);
    s = g.add_node(Op::Relu, {s}, 1, {}, "fc1_relu")->output(0);
    s = g.add_node(Op::Conv, {s, g.add_constant("w2", w2)}, 1, {}, "fc2")->output(0);
    s = g.add_node(Op::Sigmoid, {s}, 1, {}, "gate")->output(0);
    Value* y = g.add_node(Op::Mul, {s, a}, 1, {}, "scale")->output(0);  // the gate first, as torchvision exports it
    y = g.add_node(Op::Conv, {y, g.add_constant("wp", wp)}, 1, {}, "project")->output(0);
    g.set_outputs({y});
  };
  std::vector<StepInfo> steps;
  check_bf16("squeeze-excitation", build, {{"x", x}}, true, 1, 1e-4, &steps, "auto");  // fc1 writes bf16 for fc2
  expect_writes_bf16(steps, "channel_scale", "f32[2,32,7,7]");
}

// A LayerNorm whose readers are all bf16 matmuls (a transformer's QKV / MLP input) is written
// in bf16 by ferry's kernel (oneDNN 2.6's layer normalization writes its source's type): no
// reorder into bf16 between them. The LayerNorm's summation order is not the reference's, so a
// value may land one bf16 step away from the emulation's: 2e-3 relative.
TEST(OnednnBf16Steps, LayerNormWritesBf16ForBf16Readers) {
  std::string why;
  if (!host_accelerates_bf16(&why)) GTEST_SKIP() << "this host's CPU target does not run bf16 on hardware: " << why;
  Tensor x = randn({2, 10, 96}, 550), s = randn({96}, 551), b = randn({96}, 552), wq = randn({96, 64}, 553),
         wv = randn({96, 48}, 554);
  auto build = [&](Graph& g) {
    Value* in = g.add_input("x", DType::f32, x.shape());
    Value* y = g.add_node(Op::LayerNormalization, {in, g.add_constant("s", s), g.add_constant("b", b)}, 1,
                          attrs({{"axis", int64_t(-1)}, {"epsilon", 1e-5}}), "ln")->output(0);
    Value* q = g.add_node(Op::MatMul, {y, g.add_constant("wq", wq)}, 1, {}, "q")->output(0);
    Value* v = g.add_node(Op::MatMul, {y, g.add_constant("wv", wv)}, 1, {}, "v")->output(0);
    g.set_outputs({q, v});
  };
  std::vector<StepInfo> steps;
  check_bf16("layer norm", build, {{"x", x}}, false, 0, 2e-3, &steps, "auto");
  expect_writes_bf16(steps, "layer_norm", "f32[2,10,96]");
}

// A step that writes bf16 applies Gelu / Sigmoid / Tanh / SiLU as oneDNN's post-op
// (cpu_epilogue.h bf16_output_post_ops: an approximation within ~2e-4 of f(x), below the bf16
// rounding after it), so these chains write bf16 too. Against the emulation (exact activation,
// then the reader's rounding): a value near a rounding boundary may land one bf16 step away,
// 2^-8 of it, so the tolerance is 4e-3 of max(1, |y|) instead of 1e-4; the activation must be
// in the step (no own-kernel epilogue, which writes f32).
TEST(OnednnBf16Steps, ApproximateActivationsInBf16Chains) {
  std::string why;
  if (!host_accelerates_bf16(&why)) GTEST_SKIP() << "this host's CPU target does not run bf16 on hardware: " << why;
  const PrecisionSupport s = cpu_precisions(host_isa()).of(DType::bf16);
  const bool conv = std::find(s.accelerated_ops.begin(), s.accelerated_ops.end(), Op::Conv) != s.accelerated_ops.end();
  struct Act {
    Op op;
    AttrMap attrs;
  };
  const std::vector<Act> acts = {{Op::Gelu, {}}, {Op::Gelu, attrs({{"approximate", std::string("tanh")}})},
                                 {Op::Sigmoid, {}}, {Op::Tanh, {}}};
  uint32_t seed = 700;
  for (const Act& act : acts) {
    Tensor a = randn({2, 16, 64}, seed++), m1 = randn({64, 128}, seed++), c1 = randn({128}, seed++),
           m2 = randn({128, 32}, seed++);
    auto build = [&](Graph& g) {
      Value* y = g.add_node(Op::MatMul, {g.add_input("a", DType::f32, a.shape()), g.add_constant("m1", m1)}, 1, {}, "mm1")
                     ->output(0);
      y = g.add_node(Op::Add, {y, g.add_constant("c1", c1)}, 1, {}, "bias")->output(0);
      y = g.add_node(act.op, {y}, 1, act.attrs, "act")->output(0);
      y = g.add_node(Op::MatMul, {y, g.add_constant("m2", m2)}, 1, {}, "mm2")->output(0);
      g.set_outputs({y});
    };
    check_bf16(std::string("matmul chain with ") + op_name(act.op), build, {{"a", a}}, false, 1, 4e-3);
    if (!conv) continue;
    Tensor x = randn({1, 16, 10, 10}, seed++), w1 = randn({32, 16, 3, 3}, seed++), w2 = randn({24, 32, 1, 1}, seed++);
    auto build_conv = [&](Graph& g) {
      Value* y = g.add_node(Op::Conv, {g.add_input("x", DType::f32, x.shape()), g.add_constant("w1", w1)}, 1,
                            attrs({{"pads", ints({1, 1, 1, 1})}}), "c1")->output(0);
      y = g.add_node(act.op, {y}, 1, act.attrs, "act")->output(0);
      y = g.add_node(Op::Conv, {y, g.add_constant("w2", w2)}, 1, {}, "c2")->output(0);
      g.set_outputs({y});
    };
    check_bf16(std::string("conv chain with ") + op_name(act.op), build_conv, {{"x", x}}, true, 1, 4e-3);
  }
  // SiLU (x * Sigmoid(x), fused as the SiLU epilogue) in a conv chain.
  if (!conv) return;
  Tensor x = randn({1, 8, 9, 9}, seed++), w1 = randn({16, 8, 3, 3}, seed++), w2 = randn({8, 16, 1, 1}, seed++);
  auto build = [&](Graph& g) {
    Value* y = g.add_node(Op::Conv, {g.add_input("x", DType::f32, x.shape()), g.add_constant("w1", w1)}, 1,
                          attrs({{"pads", ints({1, 1, 1, 1})}}), "c1")->output(0);
    Value* sg = g.add_node(Op::Sigmoid, {y}, 1, {}, "sig")->output(0);
    y = g.add_node(Op::Mul, {y, sg}, 1, {}, "silu")->output(0);
    y = g.add_node(Op::Conv, {y, g.add_constant("w2", w2)}, 1, {}, "c2")->output(0);
    g.set_outputs({y});
  };
  check_bf16("conv chain with SiLU", build, {{"x", x}}, true, 1, 4e-3);
}

// The Cast steps of the rounding pairs (own kernels, any host): f32 -> bf16 -> f32 and the
// bf16 -> bf16 copy a declined reader of a bf16 output runs, bit-equal to the interpreter's
// Casts on ties, subnormals, NaN, Inf and overflow.
TEST(OnednnBf16Steps, CastStepsRoundLikeTheInterpreter) {
  Tensor x = randn({3, 37}, 520);
  const std::vector<float> special = {1 + 0x1p-8f, 1 + 3 * 0x1p-8f, 0x1p-133f, 3 * 0x1p-134f, 3.4e38f,
                                      INFINITY, -INFINITY, NAN, -0.0f, 0.1f};
  for (size_t i = 0; i < special.size(); ++i) x.data<float>()[i] = special[i];
  auto cast = [](Graph& g, Value* v, const char* to, const std::string& name) {
    return g.add_node(Op::Cast, {v}, 1, attrs({{"to", std::string(to)}}), name)->output(0);
  };
  auto build = [&](Graph& g) {
    Value* r = g.add_node(Op::Neg, {g.add_input("x", DType::f32, x.shape())}, 1, {}, "neg1")->output(0);
    Value* h = cast(g, cast(g, r, "bf16", "down"), "bf16", "copy");
    Value* n = g.add_node(Op::Neg, {g.add_input("x2", DType::f32, x.shape())}, 1, {}, "neg")->output(0);
    g.set_outputs({cast(g, h, "f32", "up"), cast(g, cast(g, n, "bf16", "down2"), "f32", "up2")});
  };
  // Not optimized: the optimizer drops the identity Cast bf16 -> bf16.
  auto g = std::make_unique<Graph>();
  build(*g);
  ASSERT_TRUE(infer_shapes(*g).ok());
  const std::map<std::string, Tensor> feeds{{"x", x}, {"x2", x}};
  auto want = interpret(*g, feeds);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  auto sess = CpuSession::compile(std::move(g), SessionOptions{});
  ASSERT_TRUE(sess.ok()) << sess.status().to_string();
  auto plan = (*sess)->plan_info({x.dims(), x.dims()});
  ASSERT_TRUE(plan.ok());
  int casts = 0;
  for (const StepInfo& st : plan->steps)
    if (st.op == "Cast") {
      ++casts;
      EXPECT_EQ(st.kernel.rfind("cast_", 0), 0u) << st.kernel;
    }
  EXPECT_EQ(casts, 5);
  auto got = (*sess)->run(feeds);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  for (size_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float a = (*got)[o].data<float>()[i], b = (*want)[o].data<float>()[i];
      uint32_t ab, bb;
      std::memcpy(&ab, &a, 4), std::memcpy(&bb, &b, 4);
      EXPECT_TRUE(std::isnan(b) ? std::isnan(a) : ab == bb) << "output " << o << " element " << i << ": " << a << " vs " << b;
    }
}

TEST(OnednnBf16Steps, TargetColumnFollowsTheDispatchCap) {
  const PrecisionSupport capped = cpu_precisions(Isa::avx2).of(DType::bf16);
  EXPECT_EQ(capped.exec, PrecisionExec::emulated) << capped.why;
  EXPECT_TRUE(capped.accelerated_ops.empty());
  std::string why;
  if (!host_accelerates_bf16(&why)) GTEST_SKIP() << "no bf16 hardware path here: " << why;
  EXPECT_NE(capped.why.find("dispatch cap is avx2"), std::string::npos) << capped.why;
  const PrecisionSupport full = cpu_precisions(host_isa()).of(DType::bf16);
  EXPECT_NE(std::find(full.accelerated_ops.begin(), full.accelerated_ops.end(), Op::FusedMatMul),
            full.accelerated_ops.end());
  EXPECT_EQ(cpu_precisions(host_isa()).of(DType::f16).exec, PrecisionExec::emulated) << "no fp16 steps";
}

}  // namespace
}  // namespace ferry::testing
