// The precision pass (passes/assign_precision.h): modes, the target's say, the overrides
// and their errors, and the decisions saved in the model and read back.
#include "passes/assign_precision.h"

#include <gtest/gtest.h>

#include "backends/cpu/cpu_precision.h"
#include "env/host_info.h"
#include "ir/text_format.h"
#include "ops/shape_inference.h"
#include "pass_test_util.h"
#include "precision/int8_weight_grid.h"

namespace ferry {
namespace {

const char* kMlp = R"(graph g (%x: f32[2,4]) -> (%y, %n) {
  %w = const f32[4,4] splat(0.5)
  %m = MatMul(%x, %w) @mm
  %r = Relu(%m) @relu
  %n = Shape(%r) @shape
  %y = Softmax(%r) @softmax
})";

using testing::parse_ir;

const NodePrecision& decision(const PrecisionReport& r, const std::string& node) {
  for (const NodePrecision& d : r.nodes)
    if (d.node == node) return d;
  ADD_FAILURE() << "no decision for " << node;
  return r.nodes.front();
}

TEST(AssignPrecision, Fp16LowersEveryFloatingNodeAndSaysEmulated) {
  auto g = parse_ir(kMlp);
  auto r = assign_precision(*g, reference_precisions(), {.mode = "fp16"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->nodes.size(), 3u) << "Shape has no floating output and is not listed";
  for (const NodePrecision& d : r->nodes) {
    EXPECT_EQ(d.precision, DType::f16) << d.node;
    EXPECT_EQ(d.exec, "emulated");
    EXPECT_NE(d.reason.find("no speedup"), std::string::npos) << d.reason;
  }
  EXPECT_EQ(lowered_nodes(*r).size(), 3u);
  EXPECT_EQ(r->summary(), "fp16 (emulated): 3 nodes");
}

TEST(AssignPrecision, AutoKeepsFp32WhereNothingIsAccelerated) {
  auto g = parse_ir(kMlp);
  const TargetPrecisions t = cpu_precisions(host_isa());
  auto r = assign_precision(*g, t, {.mode = "auto"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  bool bf16_hw = false;
  for (const env::IsaFlag& f : env::read_isa_flags())
    bf16_hw |= f.usable && (f.name == "amx_bf16" || f.name == "avx512_bf16");
  // The CPU's bf16 steps run MatMuls with constant weights where the target accelerates bf16
  // (bf16 hardware and oneDNN's jit / brgemm bf16 matmul): auto takes exactly those.
  const bool accelerated = t.of(DType::bf16).exec == PrecisionExec::accelerated;
  if (!bf16_hw) { EXPECT_FALSE(accelerated) << t.of(DType::bf16).why; }
  for (const NodePrecision& d : r->nodes) {
    if (accelerated && d.op == "MatMul") {
      EXPECT_EQ(d.precision, DType::bf16) << d.node;
      EXPECT_EQ(d.exec, "accelerated") << d.node;
      EXPECT_EQ(d.reason.rfind("auto: bf16 accelerated (oneDNN bf16 steps", 0), 0u) << d.reason;
      continue;
    }
    EXPECT_EQ(d.precision, DType::f32) << d.node;
    EXPECT_NE(d.reason.find("auto keeps fp32"), std::string::npos) << d.reason;
    // int8 is accelerated where oneDNN may use VNNI / AMX-INT8 (ONEDNN_MAX_CPU_ISA-capped),
    // emulated elsewhere; auto never picks it either way (it needs calibration data).
    if (host_has_int8_dot_product()) {
      EXPECT_NE(d.reason.find("int8: accelerated for Conv, FusedConv, MatMul, FusedMatMul, Gemm with constant weights "
                              "only, but auto never picks int8"),
                std::string::npos)
          << d.reason;
    } else {
      EXPECT_NE(d.reason.find("int8: per-channel s8 weights"), std::string::npos) << d.reason;
    }
    if (!bf16_hw && host_isa() == Isa::avx2) {
      EXPECT_NE(d.reason.find("bf16: no bf16 hardware: avx2 only"), std::string::npos) << d.reason;
    }
  }
}

TEST(AssignPrecision, Int8CoversTheMatrixProductsOnly) {
  auto g = parse_ir(kMlp);
  auto r = assign_precision(*g, cpu_precisions(host_isa()), {.mode = "int8"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(decision(*r, "mm").precision, DType::i8);
  // oneDNN 2.6+ has jit / brgemm u8 x s8 kernels wherever it may use VNNI.
  const bool vnni = host_has_int8_dot_product();
  EXPECT_EQ(decision(*r, "mm").exec, vnni ? "accelerated" : "emulated");
  EXPECT_NE(decision(*r, "mm").reason.find(vnni ? "int8 accelerated (per-channel s8 weights, calibrated u8 activations: "
                                                  "oneDNN u8 x s8 steps on "
                                                : "oneDNN's u8 x s8 matmul here is"),
            std::string::npos)
      << decision(*r, "mm").reason;
  EXPECT_EQ(decision(*r, "relu").precision, DType::f32);
  EXPECT_NE(decision(*r, "relu").reason.find("int8 covers Conv, FusedConv, MatMul, FusedMatMul, Gemm only"),
            std::string::npos)
      << decision(*r, "relu").reason;
}

TEST(AssignPrecision, Int8RunsTheRestAsAutoWould) {
  // A target with int8 for the matrix products and bf16 accelerated for MatMul and the fused
  // Attention (the CPU's on AMX): int8 takes the projection, the Attention goes to bf16 (not
  // fp32), the Softmax stays fp32 (bf16 only emulated for it).
  auto g = parse_ir(R"(graph g (%x: f32[1,1,3,2]) -> (%y, %s) {
    %w = const f32[2,2] splat(0.5)
    %q = MatMul(%x, %w) @proj
    %y = Attention(%q, %x, %x) @attn
    %s = Softmax(%x) @softmax
  })");
  const std::vector<Op> products = {Op::Conv, Op::FusedConv, Op::MatMul, Op::FusedMatMul, Op::Gemm};
  TargetPrecisions t{"test",
                     {{DType::bf16, PrecisionExec::accelerated, "bf16 kernels", {Op::MatMul, Op::Attention}, {}, ""},
                      {DType::i8, PrecisionExec::accelerated, "int8 kernels", products, products, ""}}, ""};
  auto r = assign_precision(*g, t, {.mode = "int8"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(decision(*r, "proj").precision, DType::i8);
  EXPECT_EQ(decision(*r, "attn").precision, DType::bf16);
  EXPECT_EQ(decision(*r, "attn").exec, "accelerated");
  EXPECT_EQ(decision(*r, "attn").reason.rfind("bf16: int8 covers Conv, FusedConv, MatMul, FusedMatMul, Gemm only; "
                                              "bf16 accelerated (bf16 kernels)", 0),
            0u)
      << decision(*r, "attn").reason;
  EXPECT_EQ(decision(*r, "softmax").precision, DType::f32) << decision(*r, "softmax").reason;
  // Where bf16 is only emulated (the reference target), the rest stays fp32.
  auto ref = assign_precision(*g, reference_precisions(), {.mode = "int8"});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(decision(*ref, "attn").precision, DType::f32) << decision(*ref, "attn").reason;
}

TEST(AssignPrecision, OverridesPinNodes) {
  auto g = parse_ir(kMlp);
  auto r = assign_precision(*g, reference_precisions(),
                            {.mode = "bf16", .keep_fp32 = {"softmax"}, .force = {"relu=fp16"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(decision(*r, "mm").precision, DType::bf16);
  EXPECT_EQ(decision(*r, "softmax").precision, DType::f32);
  EXPECT_TRUE(decision(*r, "softmax").pinned);
  EXPECT_EQ(decision(*r, "softmax").reason, "fp32: --keep-fp32");
  EXPECT_EQ(decision(*r, "relu").precision, DType::f16);
  EXPECT_TRUE(decision(*r, "relu").pinned);
}

TEST(AssignPrecision, BadRequestsAreErrorsNamingTheProblem) {
  auto g = parse_ir(kMlp);
  auto mode = assign_precision(*g, reference_precisions(), {.mode = "fp8"});
  ASSERT_FALSE(mode.ok());
  EXPECT_NE(mode.status().message().find("unknown precision mode 'fp8'"), std::string::npos);
  auto keep = assign_precision(*g, reference_precisions(), {.mode = "fp16", .keep_fp32 = {"nope"}});
  ASSERT_FALSE(keep.ok());
  EXPECT_NE(keep.status().message().find("--keep-fp32: no node named 'nope'"), std::string::npos)
      << keep.status().message();
  EXPECT_NE(keep.status().message().find("mm"), std::string::npos) << "lists the nodes there are";
  auto form = assign_precision(*g, reference_precisions(), {.mode = "fp16", .force = {"mm"}});
  ASSERT_FALSE(form.ok());
  EXPECT_NE(form.status().message().find("not of the form NODE=PRECISION"), std::string::npos);
  auto prec = assign_precision(*g, reference_precisions(), {.mode = "fp16", .force = {"mm=fp12"}});
  ASSERT_FALSE(prec.ok());
  EXPECT_NE(prec.status().message().find("unknown precision 'fp12'"), std::string::npos);
  auto int8 = assign_precision(*g, reference_precisions(), {.force = {"relu=int8"}});
  ASSERT_FALSE(int8.ok());
  EXPECT_NE(int8.status().message().find("int8 covers Conv"), std::string::npos) << int8.status().message();
  auto shape = assign_precision(*g, reference_precisions(), {.keep_fp32 = {"shape"}});
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("has no floating output"), std::string::npos);
}

TEST(AssignPrecision, SavedDecisionsAreReadBack) {
  auto g = parse_ir(kMlp);
  auto r = assign_precision(*g, reference_precisions(), {.mode = "fp16", .keep_fp32 = {"softmax"}});
  ASSERT_TRUE(r.ok());
  r->nodes[0].sensitivity = 0.25;
  const std::string saved = save_precision_metadata(*r);
  auto fresh = parse_ir(kMlp);
  auto back = assign_precision(*fresh, reference_precisions(), {.saved = saved});
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->mode, "saved");
  EXPECT_EQ(decision(*back, "mm").precision, DType::f16);
  EXPECT_EQ(decision(*back, "mm").sensitivity, 0.25);
  EXPECT_EQ(decision(*back, "softmax").precision, DType::f32);
  EXPECT_EQ(decision(*back, "softmax").reason, "saved in the model: fp32: --keep-fp32");
  EXPECT_EQ(decision(*back, "relu").precision, DType::f16);
  // An explicit mode wins over the saved decisions.
  auto fp32 = assign_precision(*fresh, reference_precisions(), {.mode = "fp32", .saved = saved});
  ASSERT_TRUE(fp32.ok());
  EXPECT_EQ(decision(*fp32, "relu").precision, DType::f32);
  // int8 decisions carry their calibration; one without it is a malformed model.
  auto q = assign_precision(*fresh, reference_precisions(), {.mode = "int8"});
  ASSERT_TRUE(q.ok());
  q->nodes[0].act_scale = 0.05;
  q->nodes[0].act_zero_point = 10;
  auto q_back = assign_precision(*fresh, reference_precisions(), {.saved = save_precision_metadata(*q)});
  ASSERT_TRUE(q_back.ok()) << q_back.status().to_string();
  EXPECT_EQ(decision(*q_back, "mm").precision, DType::i8);
  EXPECT_EQ(decision(*q_back, "mm").act_scale, 0.05);
  EXPECT_EQ(decision(*q_back, "mm").act_zero_point, 10);
  EXPECT_EQ(decision(*q_back, "mm").res_scale, 0) << "no residual calibration saved";
  q->nodes[0].res_scale = 0.125;  // a FusedConv's residual calibration travels the same way
  q->nodes[0].res_zero_point = 128;
  auto res_back = assign_precision(*fresh, reference_precisions(), {.saved = save_precision_metadata(*q)});
  ASSERT_TRUE(res_back.ok()) << res_back.status().to_string();
  EXPECT_EQ(decision(*res_back, "mm").res_scale, 0.125);
  EXPECT_EQ(decision(*res_back, "mm").res_zero_point, 128);
  q->nodes[0].res_zero_point = 300;
  auto bad_res = assign_precision(*fresh, reference_precisions(), {.saved = save_precision_metadata(*q)});
  ASSERT_FALSE(bad_res.ok());
  EXPECT_NE(bad_res.status().message().find("invalid res_scale"), std::string::npos);
  q->nodes[0].res_scale = 0;
  q->nodes[0].act_scale = 0;
  auto uncalibrated = assign_precision(*fresh, reference_precisions(), {.saved = save_precision_metadata(*q)});
  ASSERT_FALSE(uncalibrated.ok());
  EXPECT_NE(uncalibrated.status().message().find("int8 without a valid act_scale"), std::string::npos);
  auto bad = assign_precision(*fresh, reference_precisions(), {.saved = "{not json"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("metadata 'ferry.precision'"), std::string::npos);
}

TEST(AssignPrecision, SavedDecisionsSayHowThisHostRunsThem) {
  // Converted where MatMul runs on bf16 steps, loaded where bf16 is emulated (and back).
  TargetPrecisions fast{"cpu", {{DType::bf16, PrecisionExec::accelerated, "bf16 steps", {Op::MatMul}, {}, ""}}, ""};
  TargetPrecisions slow{"cpu", {{DType::bf16, PrecisionExec::emulated, "no bf16 hardware", {}, {}, ""}}, ""};
  auto g = parse_ir(kMlp);
  auto r = assign_precision(*g, fast, {.mode = "bf16"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(decision(*r, "mm").exec, "accelerated");
  const std::string saved = save_precision_metadata(*r);
  auto fresh = parse_ir(kMlp);
  auto here = assign_precision(*fresh, slow, {.saved = saved});
  ASSERT_TRUE(here.ok()) << here.status().to_string();
  EXPECT_EQ(decision(*here, "mm").precision, DType::bf16);
  EXPECT_EQ(decision(*here, "mm").exec, "emulated");
  EXPECT_NE(decision(*here, "mm").reason.find("bf16 accelerated (bf16 steps); here emulated: no bf16 hardware"),
            std::string::npos)
      << decision(*here, "mm").reason;
  auto same = assign_precision(*fresh, fast, {.saved = saved});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(decision(*same, "mm").reason.find("; here "), std::string::npos) << decision(*same, "mm").reason;
}

TEST(AssignPrecision, AutoKeepsGroupedConvsFp32WhereTheTargetDeclinesThem) {
  // RegNet's grouped 3x3 (8 channels per group) beside a depthwise and a plain conv.
  const char* convs = R"(graph g (%x: f32[1,16,8,8]) -> (%y) {
  %wg = const f32[16,8,3,3] splat(0.1)
  %wd = const f32[16,1,3,3] splat(0.1)
  %wp = const f32[16,16,1,1] splat(0.1)
  %a = Conv(%x, %wg) {group=2, pads=[1,1,1,1]} @grouped
  %b = Conv(%a, %wd) {group=16, pads=[1,1,1,1]} @depthwise
  %y = Conv(%b, %wp) @plain
})";
  PrecisionSupport bf16{DType::bf16, PrecisionExec::accelerated, "bf16 steps", {Op::Conv}, {}, ""};
  auto g = parse_ir(convs);
  auto all = assign_precision(*g, TargetPrecisions{"cpu", {bf16}, ""}, {.mode = "auto"});
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  for (const char* n : {"grouped", "depthwise", "plain"}) EXPECT_EQ(decision(*all, n).precision, DType::bf16) << n;

  bf16.grouped_conv_declined = "grouped convs are slow here";
  auto r = assign_precision(*g, TargetPrecisions{"cpu", {bf16}, ""}, {.mode = "auto"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(decision(*r, "grouped").precision, DType::f32);
  EXPECT_NE(decision(*r, "grouped").reason.find("bf16: grouped convs are slow here"), std::string::npos)
      << decision(*r, "grouped").reason;
  EXPECT_EQ(decision(*r, "depthwise").precision, DType::bf16);
  EXPECT_EQ(decision(*r, "plain").precision, DType::bf16);
  // Asked for bf16 explicitly, it runs on its bf16 step (slower than fp32, faster than emulation).
  auto forced = assign_precision(*g, TargetPrecisions{"cpu", {bf16}, ""}, {.mode = "bf16"});
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(decision(*forced, "grouped").precision, DType::bf16);
  EXPECT_EQ(decision(*forced, "grouped").exec, "accelerated");
}

TEST(AssignPrecision, CpuTargetDeclinesGroupedConvsOnlyWhereOneDnnHasNoAmxKernelForThem) {
  const PrecisionSupport s = cpu_precisions(host_isa()).of(DType::bf16);
  const std::string plain = onednn_conv_impl(DType::bf16), grouped = onednn_grouped_conv_impl(DType::bf16);
  const bool amx_plain = plain.find("amx") != std::string::npos, amx_grouped = grouped.find("amx") != std::string::npos;
  if (s.exec != PrecisionExec::accelerated) GTEST_SKIP() << "no bf16 acceleration here: " << s.why;
  EXPECT_EQ(!s.grouped_conv_declined.empty(), amx_plain && !amx_grouped) << plain << " / " << grouped;
  if (!s.grouped_conv_declined.empty()) {
    EXPECT_NE(s.grouped_conv_declined.find(grouped), std::string::npos);
  }
}

}  // namespace
}  // namespace ferry
