// Tests for ops/elementwise_trigonometric.cc; references are numpy's (float64).
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(ElementwiseTrigonometric, TrigonometricMatchNumpy) {
  Tensor x = f64({5}, {-0.9, -0.3, 0, 0.5, 0.8});
  struct Want {
    Op op;
    std::vector<double> y;
  } wants[] = {
      {Op::Tan, {-1.2601582175503392, -0.30933624960962319, 0, 0.54630248984379048, 1.0296385570503641}},
      {Op::Asin, {-1.1197695149986342, -0.30469265401539747, 0, 0.52359877559829893, 0.9272952180016123}},
      {Op::Acos, {2.6905658417935308, 1.8754889808102941, 1.5707963267948966, 1.0471975511965976, 0.64350110879328426}},
      {Op::Atan, {-0.73281510178650655, -0.2914567944778671, 0, 0.46364760900080609, 0.67474094222355274}},
      {Op::Sinh, {-1.0265167257081753, -0.3045202934471426, 0, 0.52109530549374738, 0.88810598218762304}},
      {Op::Cosh, {1.4330863854487743, 1.0453385141288605, 1, 1.1276259652063807, 1.3374349463048447}},
      {Op::Asinh, {-0.80886693565278245, -0.29567304756342244, 0, 0.48121182505960347, 0.73266825604541086}},
      {Op::Atanh, {-1.4722194895832204, -0.3095196042031117, 0, 0.54930614433405489, 1.0986122886681098}},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(op_name(w.op));
    auto out = run_op(w.op, {x});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_type((*out)[0], DType::f64, {5});
    expect_near((*out)[0], w.y, 1e-15);
  }
  auto acosh = run_op(Op::Acosh, {f64({3}, {1, 1.5, 3})});
  ASSERT_TRUE(acosh.ok());
  expect_near((*acosh)[0], {0, 0.96242365011920694, 1.7627471740390861}, 1e-15);
  expect_error(infer_op(Op::Tan, {{DType::i32, shape_of({2})}}), "Tan does not accept i32");
}

}  // namespace
}  // namespace ferry
