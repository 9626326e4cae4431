// evaluate/kernel_plugin.h: dtype codes, load errors that name the file, and the
// registry override a plugin installs (ops/registry.h). Plugins that load, run
// and misbehave are tested end to end in tests/evaluate/test_plugins.py; here, an
// override is the kernel the CPU backend runs even for an op of its step table.
#include "evaluate/kernel_plugin.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>

#include "backends/cpu/cpu_session.h"
#include "ops/registry.h"
#include "ops/shape_inference.h"

namespace ferry::evaluate {
namespace {

TEST(KernelPlugin, DtypeCodesAreOnnxsAndRoundTrip) {
  EXPECT_EQ(plugin_code_of(DType::f32), 1);
  EXPECT_EQ(plugin_code_of(DType::i64), 7);
  EXPECT_EQ(plugin_code_of(DType::bf16), 16);
  EXPECT_EQ(plugin_code_of(DType::undefined), FERRY_DTYPE_UNDEFINED);
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8, DType::i16, DType::u16,
                  DType::i32, DType::u32, DType::i64, DType::u64, DType::boolean})
    EXPECT_EQ(dtype_from_plugin_code(plugin_code_of(d)), d) << dtype_name(d);
  EXPECT_FALSE(dtype_from_plugin_code(8).has_value());   // ONNX STRING: no ferry dtype
  EXPECT_FALSE(dtype_from_plugin_code(-1).has_value());
}

TEST(KernelPlugin, LoadErrorsNameTheFile) {
  auto missing = KernelPlugin::load("/nonexistent/libnothing.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("kernel plugin /nonexistent/libnothing.so: cannot load the shared library"),
            std::string::npos)
      << missing.status().message();

  const std::string fake = testing::TempDir() + "/libfake_plugin.so";
  std::ofstream(fake) << "not an ELF file";
  auto bad = KernelPlugin::load(fake);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("kernel plugin " + fake + ": cannot load"), std::string::npos);
  std::remove(fake.c_str());
}

Status fake_kernel(KernelContext&) { return Status::Ok(); }

TEST(KernelRegistry, AnOverrideWinsOverEveryIsa) {
  // (Attention, u8) has no kernel anywhere else, so this test owns it.
  ASSERT_EQ(select_kernel(Op::Attention, DType::u8, Isa::amx), nullptr);
  register_kernel({Op::Attention, DType::u8, Isa::avx2, "attention_u8__avx2", &fake_kernel, false, false});
  EXPECT_STREQ(select_kernel(Op::Attention, DType::u8, Isa::avx512)->name, "attention_u8__avx2");
  EXPECT_EQ(select_kernel(Op::Attention, DType::u8, Isa::generic), nullptr);  // ISA entries still need their ISA
  register_kernel({Op::Attention, DType::u8, Isa::reference, "plugin:test", &fake_kernel, false, true});
  EXPECT_STREQ(select_kernel(Op::Attention, DType::u8, Isa::avx512)->name, "plugin:test");
  EXPECT_STREQ(select_kernel(Op::Attention, DType::u8, Isa::reference)->name, "plugin:test");
  EXPECT_EQ(select_kernel(Op::Attention, DType::i8, Isa::avx512), nullptr);  // keyed by dtype too
  // Later tests in the same process (the attention sweeps) enumerate every Attention kernel.
  EXPECT_EQ(unregister_kernel("attention_u8__avx2"), 1u);
  EXPECT_EQ(unregister_kernel("plugin:test"), 1u);
  EXPECT_EQ(select_kernel(Op::Attention, DType::u8, Isa::avx512), nullptr);
}


std::atomic<int> g_marker_calls{0};
Status marker_kernel(KernelContext& ctx) {  // a distinctive result: every output element 42
  ++g_marker_calls;
  Tensor& y = ctx.output(0);
  for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = 42.f;
  return Status::Ok();
}

/// x f32[2, 8] -> Softmax -> y, compiled for the CPU backend; its output and the kernel of its one step.
std::pair<Tensor, std::string> run_softmax() {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", DType::f32, Shape({Dim(2), Dim(8)}));
  g->set_outputs({g->add_node(Op::Softmax, {x}, 1, AttrMap{}, "softmax")->output(0)});
  EXPECT_TRUE(infer_shapes(*g).ok());
  auto s = CpuSession::compile(g);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return {};
  Tensor in = Tensor::empty(DType::f32, {2, 8});
  for (int64_t i = 0; i < in.numel(); ++i) in.data<float>()[i] = float(i % 5);
  auto out = (*s)->run({{"x", in}});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  auto plan = (*s)->plan_info({{2, 8}});
  EXPECT_TRUE(plan.ok());
  std::string kernel;
  for (const StepInfo& st : plan->steps)
    if (st.op == "Softmax") kernel = st.kernel;
  return {out.ok() ? (*out)[0] : Tensor(), kernel};
}

TEST(KernelRegistry, AnOverrideRunsBeforeTheCpuStepTable) {
  // Softmax f32 is a step-table row (a oneDNN primitive): the override must still win.
  auto [plain, plain_kernel] = run_softmax();
  ASSERT_TRUE(plain.defined());
  EXPECT_NE(plain_kernel.find("softmax"), std::string::npos) << plain_kernel;
  float row = 0.f;
  for (int64_t i = 0; i < 8; ++i) row += plain.data<float>()[i];
  EXPECT_NEAR(row, 1.f, 1e-5);

  register_kernel({Op::Softmax, DType::f32, Isa::reference, "plugin:test_marker", &marker_kernel, false, true});
  g_marker_calls = 0;
  auto [marked, marked_kernel] = run_softmax();
  EXPECT_EQ(unregister_kernel("plugin:test_marker"), 1u);  // before any ASSERT: later tests get Softmax back
  ASSERT_TRUE(marked.defined());
  EXPECT_EQ(marked_kernel, "plugin:test_marker");
  EXPECT_EQ(g_marker_calls.load(), 1);
  for (int64_t i = 0; i < marked.numel(); ++i) ASSERT_EQ(marked.data<float>()[i], 42.f) << i;

  auto [again, again_kernel] = run_softmax();
  EXPECT_EQ(again_kernel, plain_kernel);
  ASSERT_TRUE(again.defined());
  EXPECT_EQ(again.data<float>()[3], plain.data<float>()[3]);
}

}  // namespace
}  // namespace ferry::evaluate
