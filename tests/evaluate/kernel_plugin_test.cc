// evaluate/kernel_plugin.h: dtype codes, load errors that name the file, and the
// registry override a plugin installs (ops/registry.h). Plugins that load, run
// and misbehave are tested end to end in tests/evaluate/test_plugins.py.
#include "evaluate/kernel_plugin.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "ops/registry.h"

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
}

}  // namespace
}  // namespace ferry::evaluate
