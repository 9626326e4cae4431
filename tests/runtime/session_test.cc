// The compiled session end to end: small CNN and transformer blocks built in
// C++ (optimized, compiled) against the reference interpreter on the original
// graph; concurrent runs bitwise equal to a lone run (also under TSan, see
// expect_concurrent_runs_bitwise_identical); steady-state runs make
// no tensor-sized allocation; reshape per input signature; the memory plan.
#include "backends/cpu/cpu_session.h"

#include "backends/cpu/cpu_target.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

#include "../kernels/kernel_test_util.h"
#include "passes/pipeline.h"

// Counts heap allocations (whole test binary; only read around steady-state runs).
static std::atomic<long> g_allocs{0}, g_big_allocs{0};
void* operator new(std::size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (n >= 4096) g_big_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// GCC pairs the free() below with the new-expressions it inlines and warns
// (-Wmismatched-new-delete), though the replaced operator new above is malloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace ferry::testing {
namespace {

/// conv-SiLU, a residual block (relu, then SiLU), an SE gate (GAP, 1x1 convs, Sigmoid, Mul), max pool,
/// flatten, gemm. SiLU is x * Sigmoid(x) as exporters write it (a conv epilogue or a Swish after optimizing).
std::unique_ptr<Graph> small_cnn(Dim batch) {
  auto g = std::make_unique<Graph>();
  uint32_t seed = 100;
  auto c = [&](std::vector<int64_t> d) { return g->add_constant(g->unique_name("w"), randn(d, seed++)); };
  auto conv = [&](Value* x, int64_t oc, int64_t ic, int64_t k, int64_t group = 1, int64_t stride = 1) {
    int64_t p = k / 2;
    return g->add_node(Op::Conv, {x, c({oc, ic / group, k, k}), c({oc})}, 1,
                       attrs({{"group", group}, {"pads", ints({p, p, p, p})}, {"strides", ints({stride, stride})}}),
                       g->unique_name("conv"))->output(0);
  };
  auto node = [&](Op op, std::vector<Value*> in, AttrMap a = {}) {
    return g->add_node(op, std::move(in), 1, std::move(a), g->unique_name(op_name(op)))->output(0);
  };
  Value* x = g->add_input("x", DType::f32, Shape({batch, Dim(3), Dim(20), Dim(20)}));
  auto silu = [&](Value* v) { return node(Op::Mul, {v, node(Op::Sigmoid, {v})}); };
  Value* y = silu(conv(x, 16, 3, 3, 1, 2));
  Value* r = node(Op::Relu, {conv(y, 16, 16, 3)});
  r = conv(r, 16, 16, 1);
  y = silu(node(Op::Relu, {node(Op::Add, {r, y})}));
  Value* dw = node(Op::Clip, {conv(y, 16, 16, 3, 16), g->add_constant("lo", Tensor::scalar(0.f)),
                              g->add_constant("hi", Tensor::scalar(6.f))});
  Value* se = node(Op::GlobalAveragePool, {dw});
  se = node(Op::Relu, {conv(se, 4, 16, 1)});
  se = node(Op::Sigmoid, {conv(se, 16, 4, 1)});
  y = node(Op::Mul, {dw, se});
  y = node(Op::MaxPool, {y}, attrs({{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}}));
  y = node(Op::Flatten, {y});
  y = node(Op::Gemm, {y, c({16 * 5 * 5, 10}), c({10})});
  g->set_outputs({y});
  return g;
}

/// One pre-norm attention + MLP block with an erf Gelu, over [B, S, 32].
std::unique_ptr<Graph> small_transformer(Dim batch, Dim seq) {
  auto g = std::make_unique<Graph>();
  uint32_t seed = 200;
  // Weights scaled by 1/sqrt(fan_in) as trained nets are: unscaled N(0,1) projections saturate the
  // softmax, where f32 rounding of the scores alone moves outputs by 1e-4.
  auto c = [&](std::vector<int64_t> d) {
    Tensor t = randn(d, seed++);
    const float scale = d.size() == 2 ? 1.f / std::sqrt(float(d[0])) : 1.f;
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] *= scale;
    return g->add_constant(g->unique_name("w"), t);
  };
  auto node = [&](Op op, std::vector<Value*> in, AttrMap a = {}) {
    return g->add_node(op, std::move(in), 1, std::move(a), g->unique_name(op_name(op)))->output(0);
  };
  auto i64 = [&](std::vector<int64_t> v) {
    return g->add_constant(g->unique_name("s"), Tensor::from_vector<int64_t>(v, {int64_t(v.size())}));
  };
  auto scalar = [&](float v) { return g->add_constant(g->unique_name("k"), Tensor::scalar(v)); };
  Value* x = g->add_input("x", DType::f32, Shape({batch, seq, Dim(32)}));
  Value* h = node(Op::LayerNormalization, {x, c({32}), c({32})}, attrs({{"axis", int64_t(-1)}}));
  auto heads = [&](Value* v) {  // [B,S,32] -> [B,4,S,8]
    v = node(Op::Reshape, {v, i64({0, 0, 4, 8})});
    return node(Op::Transpose, {v}, attrs({{"perm", ints({0, 2, 1, 3})}}));
  };
  Value* q = heads(node(Op::Add, {node(Op::MatMul, {h, c({32, 32})}), c({32})}));
  Value* k = heads(node(Op::Add, {node(Op::MatMul, {h, c({32, 32})}), c({32})}));
  Value* v = heads(node(Op::Add, {node(Op::MatMul, {h, c({32, 32})}), c({32})}));
  Value* kt = node(Op::Transpose, {k}, attrs({{"perm", ints({0, 1, 3, 2})}}));
  Value* s = node(Op::Div, {node(Op::MatMul, {q, kt}), scalar(2.828427f)});
  Value* p = node(Op::Softmax, {s}, attrs({{"axis", int64_t(-1)}}));
  Value* o = node(Op::Transpose, {node(Op::MatMul, {p, v})}, attrs({{"perm", ints({0, 2, 1, 3})}}));
  o = node(Op::Reshape, {o, i64({0, 0, 32})});
  x = node(Op::Add, {x, node(Op::Add, {node(Op::MatMul, {o, c({32, 32})}), c({32})})});
  h = node(Op::LayerNormalization, {x, c({32}), c({32})}, attrs({{"axis", int64_t(-1)}}));
  Value* f = node(Op::Add, {node(Op::MatMul, {h, c({32, 64})}), c({64})});
  Value* gelu = node(Op::Mul, {node(Op::Mul, {f, scalar(0.5f)}),
                               node(Op::Add, {node(Op::Erf, {node(Op::Div, {f, scalar(1.4142135f)})}), scalar(1.f)})});
  x = node(Op::Add, {x, node(Op::Add, {node(Op::MatMul, {gelu, c({64, 32})}), c({32})})});
  g->set_outputs({x});
  return g;
}

std::unique_ptr<CpuSession> compile_optimized(std::unique_ptr<Graph> g, SessionOptions o = {}) {
  EXPECT_TRUE(infer_shapes(*g).ok());
  Status st = optimize(*g, cpu_target(), {}, nullptr);
  EXPECT_TRUE(st.ok()) << st.to_string();
  auto s = CpuSession::compile(std::move(g), o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(s).value() : nullptr;
}

void expect_matches_interpreter(std::unique_ptr<Graph> (*make)(Dim, Dim), std::vector<std::vector<int64_t>> shapes) {
  for (bool reference : {false, true}) {
    SessionOptions o;
    o.reference_kernels = reference;
    auto s = compile_optimized(make(Dim::symbol("N"), Dim::symbol("S")), o);
    ASSERT_TRUE(s);
    for (const auto& dims : shapes) {  // several signatures through one session
      auto g = make(Dim::symbol("N"), Dim::symbol("S"));
      ASSERT_TRUE(infer_shapes(*g).ok());
      std::map<std::string, Tensor> feeds{{"x", randn(dims, uint32_t(dims[0] * 7 + dims[1]))}};
      auto want = interpret(*g, feeds);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      auto got = s->run(feeds);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-4)) << (reference ? "reference" : "fast") << " dims[0]=" << dims[0];
    }
  }
}

std::unique_ptr<Graph> cnn2(Dim n, Dim) { return small_cnn(n); }

TEST(CpuSession, CnnMatchesInterpreterAcrossSignatures) {
  expect_matches_interpreter(&cnn2, {{1, 3, 20, 20}, {3, 3, 20, 20}, {1, 3, 20, 20}});
}

TEST(CpuSession, TransformerMatchesInterpreterAcrossSignatures) {
  expect_matches_interpreter(&small_transformer, {{2, 16, 32}, {1, 7, 32}, {2, 16, 32}});
}

/// 4 callers x 10 runs on one session, started together on a fresh session (so they race
/// through reshape and context binding too), with two input signatures alternating; every
/// output bitwise equal to a lone run on a separate session. scripts/test.sh runs the
/// session tests under ThreadSanitizer (build-tsan/); libgomp is not instrumented,
/// so TSan cannot see OpenMP-internal synchronization; with one OpenMP thread per session
/// every parallel region runs on its caller and TSan sees exactly the 4 caller threads.
void expect_concurrent_runs_bitwise_identical(std::unique_ptr<Graph> (*make)(), std::vector<std::vector<int64_t>> dims,
                                              int threads) {
  auto lone = compile_optimized(make(), {.threads = threads});
  auto shared = compile_optimized(make(), {.threads = threads});
  ASSERT_TRUE(lone && shared);
  std::vector<std::vector<Tensor>> in, want;
  for (size_t k = 0; k < dims.size(); ++k) {
    in.push_back({randn(dims[k], uint32_t(5 + k))});
    want.emplace_back();
    ASSERT_TRUE(lone->run(in[k], &want[k]).ok());
  }
  std::atomic<int> mismatches{0}, failures{0}, ready{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < 4) std::this_thread::yield();
      std::vector<Tensor> out;  // reused across runs, as a serving loop would
      for (int i = 0; i < 10; ++i) {
        const size_t k = size_t(t + i) % in.size();
        if (!shared->run(in[k], &out).ok()) ++failures;
        else if (!out[0].bit_equal(want[k][0])) ++mismatches;
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

std::unique_ptr<Graph> transformer_2x16() { return small_transformer(Dim::symbol("N"), Dim::symbol("S")); }
std::unique_ptr<Graph> cnn_batch() { return small_cnn(Dim::symbol("N")); }

TEST(CpuSession, ConcurrentRunsOneOmpThreadEachTransformer) {
  expect_concurrent_runs_bitwise_identical(&transformer_2x16, {{2, 16, 32}, {1, 7, 32}}, 1);
}
TEST(CpuSession, ConcurrentRunsOneOmpThreadEachCnn) {
  expect_concurrent_runs_bitwise_identical(&cnn_batch, {{1, 3, 20, 20}, {3, 3, 20, 20}}, 1);
}
TEST(CpuSession, ConcurrentRunsTwoOmpThreadsEachTransformer) {
  expect_concurrent_runs_bitwise_identical(&transformer_2x16, {{2, 16, 32}, {1, 7, 32}}, 2);
}
TEST(CpuSession, ConcurrentRunsTwoOmpThreadsEachCnn) {
  expect_concurrent_runs_bitwise_identical(&cnn_batch, {{1, 3, 20, 20}, {3, 3, 20, 20}}, 2);
}

TEST(CpuSession, SteadyStateRunsAllocateNoTensorMemory) {
  auto s = compile_optimized(small_cnn(Dim(1)));
  ASSERT_TRUE(s);
  std::vector<Tensor> in{randn({1, 3, 20, 20}, 9)}, out;
  ASSERT_TRUE(s->run(in, &out).ok());  // reshape, bind, outputs allocated
  ASSERT_TRUE(s->run(in, &out).ok());
  const void* out_data = out[0].raw();
  long before = g_allocs.load(), big_before = g_big_allocs.load();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(s->run(in, &out).ok());
  long small = g_allocs.load() - before, big = g_big_allocs.load() - big_before;
  EXPECT_EQ(big, 0) << "tensor-sized allocations during steady-state runs";
  EXPECT_EQ(out[0].raw(), out_data) << "the output tensor was not reused";
  // oneDNN's execute() builds a small argument map per call (library-internal bookkeeping).
  RecordProperty("small_allocations_per_run", std::to_string(small / 5));
}

TEST(CpuSession, MemoryPlanReusesBuffers) {
  auto s = compile_optimized(small_cnn(Dim(1)));
  ASSERT_TRUE(s);
  auto info = s->plan_info({{1, 3, 20, 20}});
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_GT(info->naive_bytes, 0u);
  EXPECT_LT(info->arena_bytes, info->naive_bytes);
  EXPECT_FALSE(info->steps.empty());
  // The optimizer fused for cpu_target(); the session runs those nodes as they are.
  int fused_conv = 0, reference = 0;
  for (const StepInfo& st : info->steps) {
    fused_conv += st.op == "FusedConv";
    reference += st.reference;
    EXPECT_NE(st.op, "Sigmoid") << "the SE gate's Sigmoid belongs in its conv's epilogue";
  }
  EXPECT_GE(fused_conv, 5);
  EXPECT_EQ(reference, 0) << "a step fell back to a reference kernel";
  if (host_isa() >= Isa::avx2) {
    // conv -> SiLU: one step, oneDNN conv then own swish in place; Relu -> SiLU: one Swish step;
    // the SE gate: conv then own sigmoid.
    int conv_silu = 0, swish = 0, conv_sigmoid = 0;
    for (const StepInfo& st : info->steps) {
      conv_silu += st.op == "FusedConv" && st.kernel.find("+swish_f32__") != std::string::npos;
      conv_sigmoid += st.op == "FusedConv" && st.kernel.find("+sigmoid_f32__") != std::string::npos;
      swish += st.op == "Swish" && st.kernel.rfind("swish_f32__", 0) == 0;
    }
    EXPECT_EQ(conv_silu, 1);
    EXPECT_EQ(swish, 1);
    EXPECT_EQ(conv_sigmoid, 1);
  }
}

TEST(CpuSession, WrongInputIsAnErrorNotACrash) {
  auto s = compile_optimized(small_cnn(Dim(1)));
  ASSERT_TRUE(s);
  std::vector<Tensor> bad{randn({1, 3, 21, 20}, 1)}, out;
  Status st = s->run(bad, &out);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'x'"), std::string::npos) << st.to_string();
  auto r = s->run(std::map<std::string, Tensor>{{"y", randn({1, 3, 20, 20}, 1)}});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace ferry::testing
