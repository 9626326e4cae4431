// The Gelu rows of backends/cpu/kernels.def (gelu_f32__avx2 / __avx512, both
// forms: approximate=none (erf) and tanh) against ref_Gelu over shapes that
// leave vector tails and values that reach the saturating ranges.
#include <limits>

#include "backends/cpu/cpu_kernels.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

TEST(GeluF32, EveryRowMatchesReferenceInBothForms) {
  register_cpu_kernels();
  int checked = 0;
  for (const KernelEntry& k : registered_kernels()) {
    if (k.op != Op::Gelu || k.isa > host_isa()) continue;
    for (const char* mode : {"none", "tanh"})
      for (auto dims : std::vector<std::vector<int64_t>>{{1}, {7}, {17, 33}, {2, 128, 768}, {0, 3}}) {
        Tensor x = randn(dims, 5);
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 5.f;
        AttrMap a = attrs({{"approximate", std::string(mode)}});
        auto want = run_op(Op::Gelu, {x}, a);
        ASSERT_TRUE(want.ok());
        Graph g;
        Node* n = detail::build_one_node(g, Op::Gelu, {x}, a, 1, {});
        std::vector<Tensor> y = {Tensor::empty(DType::f32, x.dims())};
        for (int64_t i = 0; i < y[0].numel(); ++i) y[0].data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
        KernelContext ctx(*n, {&x}, &y);
        ASSERT_TRUE(k.fn(ctx).ok()) << k.name;
        EXPECT_TRUE(close(y[0], (*want)[0], 2e-6)) << k.name << " " << mode << " " << x.type_string();
        std::vector<Tensor> alias = {x.clone()};  // in place
        KernelContext ctx2(*n, {&alias[0]}, &alias);
        ASSERT_TRUE(k.fn(ctx2).ok());
        EXPECT_TRUE(close(alias[0], (*want)[0], 2e-6)) << k.name << " in place";
        ++checked;
      }
  }
  if (host_isa() >= Isa::avx2) {
    EXPECT_GT(checked, 0);
  }
}

}  // namespace
}  // namespace ferry::testing
