#include "validate/tolerance.h"

#include <gtest/gtest.h>

namespace ferry::validate {
namespace {

TEST(ValidateTolerance, DocumentedDefaults) {
  ToleranceTable t;
  EXPECT_DOUBLE_EQ(t.get(DType::f32).atol, 1e-3);
  EXPECT_DOUBLE_EQ(t.get(DType::f32).rtol, 1e-3);
  EXPECT_DOUBLE_EQ(t.get(DType::f16).atol, 1e-2);
  EXPECT_DOUBLE_EQ(t.get(DType::bf16).rtol, 5e-2);
  EXPECT_DOUBLE_EQ(t.get(DType::f64).atol, 1e-9);
  EXPECT_DOUBLE_EQ(t.get(DType::i64).atol, 0);
  EXPECT_DOUBLE_EQ(t.get(DType::boolean).rtol, 0);
}

TEST(ValidateTolerance, GlobalThenPerDtypeOverrides) {
  ToleranceTable t;
  t.set_float_atol(0.5);
  t.set_float_rtol(0.25);
  EXPECT_DOUBLE_EQ(t.get(DType::f16).atol, 0.5);
  EXPECT_DOUBLE_EQ(t.get(DType::f64).rtol, 0.25);
  EXPECT_DOUBLE_EQ(t.get(DType::i32).atol, 0);  // integers stay exact
  ASSERT_TRUE(t.apply_override("f16=1e-3,2e-3").ok());
  EXPECT_DOUBLE_EQ(t.get(DType::f16).atol, 1e-3);
  EXPECT_DOUBLE_EQ(t.get(DType::f16).rtol, 2e-3);
  ASSERT_TRUE(t.apply_override("i64=1,0").ok());
  EXPECT_DOUBLE_EQ(t.get(DType::i64).atol, 1);
}

TEST(ValidateTolerance, OverrideErrorsNameTheText) {
  ToleranceTable t;
  Status a = t.apply_override("f16");
  EXPECT_NE(a.message().find("'f16' is not of the form DTYPE=ATOL,RTOL"), std::string::npos) << a.message();
  Status b = t.apply_override("f17=1,1");
  EXPECT_NE(b.message().find("unknown dtype 'f17'"), std::string::npos) << b.message();
  Status c = t.apply_override("f32=-1,1");
  EXPECT_NE(c.message().find("finite numbers >= 0"), std::string::npos) << c.message();
  EXPECT_FALSE(t.apply_override("f32=1,nan").ok());
  EXPECT_FALSE(t.apply_override("f32=1x,1").ok());
  EXPECT_FALSE(t.apply_override("f32=1").ok());
}

TEST(ValidateTolerance, MixedDtypesUseTheLooser) {
  ToleranceTable t;
  Tolerance tol = tolerance_for(t, DType::f32, DType::bf16);
  EXPECT_DOUBLE_EQ(tol.atol, 5e-2);
  EXPECT_DOUBLE_EQ(tol.rtol, 5e-2);
}

}  // namespace
}  // namespace ferry::validate
