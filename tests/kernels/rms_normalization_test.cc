// The RMSNormalization rows of backends/cpu/kernels.def against
// ref_RMSNormalization: row lengths that leave vector tails, axes other than
// the last, gamma with leading 1s, and a gamma the fast path hands back to
// the reference kernel (broadcast along the row).
#include <limits>

#include "backends/cpu/cpu_kernels.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct RmsCase {
  std::vector<int64_t> x, gamma;
  int64_t axis;
};

TEST(RmsNormalizationF32, EveryRowMatchesReference) {
  register_cpu_kernels();
  int checked = 0;
  const std::vector<RmsCase> cases = {{{1, 1}, {1}, -1},          {{3, 7}, {7}, -1},
                                      {{2, 5, 768}, {768}, -1},   {{2, 3, 4, 5}, {4, 5}, 2},
                                      {{4, 33}, {1, 33}, 1},      {{64, 4096}, {4096}, -1},
                                      {{2, 6, 10}, {1, 10}, 1},   {{0, 8}, {8}, -1}};
  for (const KernelEntry& k : registered_kernels()) {
    if (k.op != Op::RMSNormalization || k.isa > host_isa()) continue;
    for (const RmsCase& c : cases) {
      Tensor x = randn(c.x, 7), g = randn(c.gamma, 8);
      AttrMap a = attrs({{"axis", c.axis}, {"epsilon", 1e-5}});
      auto want = run_op(Op::RMSNormalization, {x, g}, a);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      Graph gr;
      Node* n = detail::build_one_node(gr, Op::RMSNormalization, {x, g}, a, 1, {});
      std::vector<Tensor> y = {Tensor::empty(DType::f32, x.dims())};
      for (int64_t i = 0; i < y[0].numel(); ++i) y[0].data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
      KernelContext ctx(*n, {&x, &g}, &y);
      Status st = k.fn(ctx);
      ASSERT_TRUE(st.ok()) << k.name << ": " << st.to_string();
      EXPECT_TRUE(close(y[0], (*want)[0], 2e-6)) << k.name << " on " << x.type_string() << " axis " << c.axis;
      ++checked;
    }
  }
  if (host_isa() >= Isa::avx2) {
    EXPECT_GT(checked, 0);
  }
}

}  // namespace
}  // namespace ferry::testing
