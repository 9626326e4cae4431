// The activation table (ir/activation.h): names round-trip, each row names the
// standalone op it replaces, and activation_keeps_zero agrees with the math.
#include "ir/activation.h"

#include <gtest/gtest.h>

#include "ops/activation.h"

namespace ferry {
namespace {

TEST(ActivationTable, NamesRoundTripAndOpsExist) {
  int n = 0;
  for (Activation a : all_activations()) {
    auto back = activation_from_name(activation_name(a));
    ASSERT_TRUE(back.has_value()) << activation_name(a);
    EXPECT_EQ(*back, a);
    EXPECT_NE(std::string(op_name(activation_op(a))), "") << activation_name(a);
    ++n;
  }
  EXPECT_EQ(n, 11);
  EXPECT_FALSE(activation_from_name("Softplus").has_value());
  EXPECT_EQ(activation_op(Activation::kSiLU), Op::Swish);
  EXPECT_EQ(activation_params(Activation::kClip), 2);
}

TEST(ActivationTable, KeepsZeroMatchesTheFunction) {
  for (Activation a : all_activations()) {
    if (!activation_keeps_zero(a)) continue;
    for (double alpha : {0.1, 1.0, 2.5})
      EXPECT_EQ(apply_activation(a, 0.0, alpha, alpha + 1.0), 0.0) << activation_name(a) << " alpha " << alpha;
  }
  EXPECT_FALSE(activation_keeps_zero(Activation::kSigmoid));
  EXPECT_NE(apply_activation(Activation::kSigmoid, 0.0, 0, 0), 0.0);
}

}  // namespace
}  // namespace ferry
