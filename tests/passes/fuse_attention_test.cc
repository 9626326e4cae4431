#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

constexpr double kRtol = 1e-5;

// BERT as torch exports it: per-head Reshape/Transpose wrappers, K transposed
// straight to [B, H, D, S], the scale on the scores, an additive mask.
const char* kBertBlock = R"(graph g (%q3: f32[1,4,8], %k3: f32[1,4,8], %v3: f32[1,4,8], %mask: f32[1,1,1,4]) -> (%y) {
    %shp = const i64[4] [1, 4, 2, 4]
    %out_shp = const i64[3] [1, 4, 8]
    %scale = const f32[] [0.5]
    %qr = Reshape(%q3, %shp) @q_reshape
    %q = Transpose(%qr) {perm=[0,2,1,3]} @q_t
    %kr = Reshape(%k3, %shp) @k_reshape
    %kt = Transpose(%kr) {perm=[0,2,3,1]} @k_t
    %vr = Reshape(%v3, %shp) @v_reshape
    %v = Transpose(%vr) {perm=[0,2,1,3]} @v_t
    %s = MatMul(%q, %kt) @qk
    %ss = Mul(%s, %scale) @scale
    %sm_in = Add(%ss, %mask) @add_mask
    %p = Softmax(%sm_in) {axis=-1} @softmax
    %o = MatMul(%p, %v) @pv
    %ot = Transpose(%o) {perm=[0,2,1,3]} @o_t
    %y = Reshape(%ot, %out_shp) @o_reshape
  })";

TEST(FuseAttention, BertBlockBecomesOne3dAttention) {
  PassStats stats;
  std::string out = rewrite(kBertBlock, fuse_attention, &stats, kRtol);
  EXPECT_EQ(out,
            "graph g (%q3: f32[1,4,8], %k3: f32[1,4,8], %v3: f32[1,4,8], %mask: f32[1,1,1,4]) -> (%y) {\n"
            "  %y = Attention(%q3, %k3, %v3, %mask) {kv_num_heads=2, q_num_heads=2, scale=0.5} : f32[1,4,8] "
            "@pv/attention\n"
            "}\n");
  PatternStats s = stats_of(stats, "fuse_attention", "sdpa_to_attention");
  EXPECT_EQ(s.applied, 1);
  EXPECT_TRUE(s.near_misses.empty());
}

TEST(FuseAttention, OneHeadAttentionOn3dOperands) {
  // The seeds' module: softmax(Q K^T / 8) V on [B, S, D] (no head split): the 3-D form, one head.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%q: f32[2,5,8], %k: f32[2,6,8], %v: f32[2,6,3]) -> (%y) {
    %c = const f32[] [0.125]
    %kt = Transpose(%k) {perm=[0,2,1]} @k_t
    %s = MatMul(%q, %kt) @qk
    %ss = Mul(%s, %c) @scale
    %p = Softmax(%ss) {axis=-1} @softmax
    %y = MatMul(%p, %v) @pv
  })",
                            fuse_attention, &stats, kRtol);
  EXPECT_EQ(out,
            "graph g (%q: f32[2,5,8], %k: f32[2,6,8], %v: f32[2,6,3]) -> (%y) {\n"
            "  %y = Attention(%q, %k, %v) {kv_num_heads=1, q_num_heads=1, scale=0.125} : f32[2,5,3] @pv/attention\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "fuse_attention", "sdpa_to_attention").applied, 1);
}

TEST(FuseAttentionNearMiss, OneHeadAttentionWithABatchedMask) {
  PassStats stats;
  rewrite(R"(graph g (%q: f32[2,5,8], %k: f32[2,5,8], %v: f32[2,5,8], %m: f32[2,5,5]) -> (%y) {
    %kt = Transpose(%k) {perm=[0,2,1]} @k_t
    %s = MatMul(%q, %kt) @qk
    %sm = Add(%s, %m) @mask
    %p = Softmax(%sm) {axis=-1} @softmax
    %y = MatMul(%p, %v) @pv
  })",
          fuse_attention, &stats, kRtol);
  PatternStats s = stats_of(stats, "fuse_attention", "sdpa_to_attention");
  EXPECT_EQ(s.applied, 0);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_NE(s.near_misses[0].reason.find("mask of rank 3"), std::string::npos) << s.near_misses[0].reason;
}

TEST(FuseAttention, TorchMultiheadAttention4dWithScaleOnQAndK) {
  // nn.MultiheadAttention / SDPA export: sqrt(scale) on Q and on K^T, no mask.
  std::string out = rewrite(R"(graph g (%q: f32[1,2,5,4], %k: f32[1,2,5,4], %v: f32[1,2,5,3]) -> (%y) {
    %c = const f32[1] [0.70710677]
    %kt = Transpose(%k) {perm=[0,1,3,2]} @k_t
    %qs = Mul(%q, %c) @q_scale
    %ks = Mul(%kt, %c) @k_scale
    %s = MatMul(%qs, %ks) @qk
    %p = Softmax(%s) {axis=-1} @softmax
    %y = MatMul(%p, %v) @pv
  })",
                            fuse_attention, nullptr, kRtol);
  EXPECT_NE(out.find("%y = Attention(%q, %k, %v) {scale=0.49999997}"), std::string::npos) << out;
  EXPECT_EQ(out.find("Softmax"), std::string::npos) << out;
}

TEST(FuseAttention, KeyWithoutTransposeGetsOne) {
  // K^T is a graph input: K = Transpose(K^T).
  std::string out = rewrite(R"(graph g (%q: f32[2,2,3,4], %kt: f32[2,2,4,3], %v: f32[2,2,3,4]) -> (%y) {
    %s = MatMul(%q, %kt) @qk
    %p = Softmax(%s) {axis=3} @softmax
    %y = MatMul(%p, %v) @pv
  })",
                            fuse_attention, nullptr, kRtol);
  EXPECT_NE(out.find("%qk/key = Transpose(%kt) {perm=[0,1,3,2]} : f32[2,2,3,4]"), std::string::npos) << out;
  EXPECT_NE(out.find("%y = Attention(%q, %qk/key, %v) {scale=1}"), std::string::npos) << out;
}

TEST(FuseAttention, Gpt2CausalWhereBecomesIsCausal) {
  std::string out = rewrite(R"(graph g (%q3: f32[1,4,8], %k3: f32[1,4,8], %v3: f32[1,4,8]) -> (%y) {
    %shp = const i64[4] [1, -1, 2, 4]
    %out_shp = const i64[3] [1, -1, 8]
    %scale = const f32[] [0.5]
    %causal = const bool[4,4] [true, false, false, false, true, true, false, false, true, true, true, false, true, true, true, true]
    %fill = const f32[] [-3.4028235e+38]
    %qr = Reshape(%q3, %shp) @q_reshape
    %q = Transpose(%qr) {perm=[0,2,1,3]} @q_t
    %kr = Reshape(%k3, %shp) @k_reshape
    %kt = Transpose(%kr) {perm=[0,2,3,1]} @k_t
    %vr = Reshape(%v3, %shp) @v_reshape
    %v = Transpose(%vr) {perm=[0,2,1,3]} @v_t
    %s = MatMul(%q, %kt) @qk
    %ss = Mul(%s, %scale) @scale
    %w = Where(%causal, %ss, %fill) @where
    %p = Softmax(%w) {axis=-1} @softmax
    %o = MatMul(%p, %v) @pv
    %ot = Transpose(%o) {perm=[0,2,1,3]} @o_t
    %y = Reshape(%ot, %out_shp) @o_reshape
  })",
                            fuse_attention, nullptr, kRtol);
  EXPECT_NE(out.find("%y = Attention(%q3, %k3, %v3) {is_causal=1, kv_num_heads=2, q_num_heads=2, scale=0.5}"),
            std::string::npos)
      << out;
}

TEST(FuseAttention, TriluOfOnesOverAStaticSquareIsCausal) {
  // The in-graph causal mask (GPT-2 export with a static sequence): Trilu(ConstantOfShape(true), upper=0).
  std::string out = rewrite(R"(graph g (%q: f32[1,2,4,3], %k: f32[1,2,4,3], %v: f32[1,2,4,3]) -> (%y) {
    %sq = const i64[2] [4, 4]
    %fill = const f32[] [-3.4028235e+38]
    %ones = ConstantOfShape(%sq) {value=tensor bool[1] [true]} @ones
    %tri = Trilu(%ones) {upper=0} @tril
    %kt = Transpose(%k) {perm=[0,1,3,2]} @k_t
    %s = MatMul(%q, %kt) @qk
    %w = Where(%tri, %s, %fill) @where
    %p = Softmax(%w) {axis=-1} @softmax
    %y = MatMul(%p, %v) @pv
  })",
                            fuse_attention, nullptr, kRtol);
  EXPECT_NE(out.find("%y = Attention(%q, %k, %v) {is_causal=1, scale=1}"), std::string::npos) << out;
}

TEST(FuseAttention, UpperTriangularWhereStaysAMask) {
  // upper=1 keeps the future, not the past: not causal, an additive mask.
  std::string out = rewrite(R"(graph g (%q: f32[1,2,4,3], %k: f32[1,2,4,3], %v: f32[1,2,4,3]) -> (%y) {
    %sq = const i64[2] [4, 4]
    %fill = const f32[] [-3.4028235e+38]
    %ones = ConstantOfShape(%sq) {value=tensor bool[1] [true]} @ones
    %tri = Trilu(%ones) {upper=1} @triu
    %kt = Transpose(%k) {perm=[0,1,3,2]} @k_t
    %s = MatMul(%q, %kt) @qk
    %w = Where(%tri, %s, %fill) @where
    %p = Softmax(%w) {axis=-1} @softmax
    %y = MatMul(%p, %v) @pv
  })",
                            fuse_attention, nullptr, kRtol);
  EXPECT_NE(out.find("%y = Attention(%q, %k, %v, %where/mask) {scale=1}"), std::string::npos) << out;
  EXPECT_EQ(out.find("is_causal"), std::string::npos) << out;
}

TEST(FuseAttention, NonCausalWhereBecomesAnAdditiveMask) {
  std::string out = rewrite(R"(graph g (%q: f32[1,2,3,4], %k: f32[1,2,3,4], %v: f32[1,2,3,4], %m: bool[1,1,1,3]) -> (%y) {
    %fill = const f32[] [-1e+38]
    %kt = Transpose(%k) {perm=[0,1,3,2]} @k_t
    %s = MatMul(%q, %kt) @qk
    %w = Where(%m, %s, %fill) @where
    %p = Softmax(%w) {axis=-1} @softmax
    %y = MatMul(%p, %v) @pv
  })",
                            fuse_attention, nullptr, kRtol);
  EXPECT_NE(out.find("%where/mask = Where(%m, %where/zero, %fill) : f32[1,1,1,3]"), std::string::npos) << out;
  EXPECT_NE(out.find("%y = Attention(%q, %k, %v, %where/mask) {scale=1}"), std::string::npos) << out;
}

TEST(FuseAttention, KerasMultiHeadAttentionEinsums) {
  // keras.layers.MultiHeadAttention as tf2onnx writes it: EinsumDense outputs
  // [B, S, H, D], the query scaled before the score einsum, an additive mask.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%q: f32[2,5,3,4], %k: f32[2,6,3,4], %v: f32[2,6,3,2], %mask: f32[2,1,5,6]) -> (%y) {
    %c = const f32[] [0.5]
    %qs = Mul(%q, %c) @q_scale
    %s = Einsum(%k, %qs) {equation="aecd,abcd->acbe"} @qk
    %sm_in = Add(%s, %mask) @add_mask
    %p = Softmax(%sm_in) {axis=-1} @softmax
    %y = Einsum(%p, %v) {equation="acbe,aecd->abcd"} @pv
  })",
                            fuse_attention, &stats, kRtol);
  EXPECT_NE(out.find("Attention(%pv/q, %pv/k, %pv/v, %mask) {kv_num_heads=3, q_num_heads=3, scale=0.5} : f32[2,5,6]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%y = Reshape(%pv/attention, %pv/heads/shape) : f32[2,5,3,2]"), std::string::npos) << out;
  EXPECT_EQ(stats_of(stats, "fuse_attention", "keras_einsum_to_attention").applied, 1);
}

TEST(FuseAttention, EinsumInHeadsFirstLayout) {
  std::string out = rewrite(R"(graph g (%q: f32[1,2,3,4], %k: f32[1,2,5,4], %v: f32[1,2,5,3]) -> (%y) {
    %s = Einsum(%q, %k) {equation="bhqd,bhkd->bhqk"} @qk
    %p = Softmax(%s) {axis=-1} @softmax
    %y = Einsum(%p, %v) {equation="bhqk,bhkd->bhqd"} @pv
  })",
                            fuse_attention, nullptr, kRtol);
  EXPECT_EQ(out,
            "graph g (%q: f32[1,2,3,4], %k: f32[1,2,5,4], %v: f32[1,2,5,3]) -> (%y) {\n"
            "  %y = Attention(%q, %k, %v) {scale=1} : f32[1,2,3,3] @pv/attention\n"
            "}\n");
}

TEST(FuseAttentionNearMiss, EinsumWithMixedLayouts) {
  PassStats stats;
  const std::string text =
      "graph g (%q: f32[1,3,2,4], %k: f32[1,2,3,4], %v: f32[1,2,3,4]) -> (%y) {\n"
      "  %s = Einsum(%q, %k) {equation=\"bqhd,bhkd->bhqk\"} : f32[1,2,3,3] @qk\n"
      "  %p = Softmax(%s) {axis=-1} : f32[1,2,3,3] @softmax\n"
      "  %y = Einsum(%p, %v) {equation=\"bhqk,bhkd->bhqd\"} : f32[1,2,3,4] @pv\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_attention, &stats), text);
  PatternStats s = stats_of(stats, "fuse_attention", "keras_einsum_to_attention");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason,
            "score Einsum bqhd,bhkd->bhqk is not Q, K both [batch, seq, head, dim] or both [batch, head, seq, dim]");
}

TEST(FuseAttention, SwinShiftedWindowMaskAndRelativeBias) {
  // torchvision Swin: scores + relative-position bias, then viewed as
  // [B/nW, nW, H, N, N] + window mask [1, nW, 1, N, N], viewed back.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%q: f32[4,2,3,2], %k: f32[4,2,3,2], %v: f32[4,2,3,2]) -> (%y) {
    %c = const f32[] [0.70710677]
    %rel = const f32[1,2,3,3] [-0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2]
    %win = const f32[1,2,1,3,3] [-100, 0, 0, 0, -100, 0, 0, 0, -100, 0, 0, 0, -100, 0, 0, 0, -100, 0]
    %s5 = const i64[5] [2, 2, 2, 3, 3]
    %s4 = const i64[4] [-1, 2, 3, 3]
    %qs = Mul(%q, %c) @q_scale
    %kt = Transpose(%k) {perm=[0,1,3,2]} @k_t
    %s = MatMul(%qs, %kt) @qk
    %b = Add(%s, %rel) @add_rel
    %r5 = Reshape(%b, %s5) @view5
    %m5 = Add(%r5, %win) @add_win
    %r4 = Reshape(%m5, %s4) @view4
    %p = Softmax(%r4) {axis=-1} @softmax
    %y = MatMul(%p, %v) @pv
  })",
                            fuse_attention, &stats, kRtol);
  EXPECT_NE(out.find("%y = Attention(%q, %k, %v, %softmax/mask) {scale=0.7071"), std::string::npos) << out;
  EXPECT_NE(out.find("%softmax/mask = const f32[4,2,3,3]"), std::string::npos) << out;
  EXPECT_EQ(out.find("Reshape"), std::string::npos) << out;
  EXPECT_EQ(stats_of(stats, "fuse_attention", "unfold_window_mask").applied, 1);
  EXPECT_EQ(stats_of(stats, "fuse_attention", "sdpa_to_attention").applied, 1);
}

TEST(FuseAttentionNearMiss, SoftmaxOfSomethingElse) {
  PassStats stats;
  const std::string text =
      "graph g (%q: f32[1,2,3,4], %kt: f32[1,2,4,3], %v: f32[1,2,3,4]) -> (%y) {\n"
      "  %s = MatMul(%q, %kt) : f32[1,2,3,3] @qk\n"
      "  %r = Sigmoid(%s) : f32[1,2,3,3] @sig\n"
      "  %p = Softmax(%r) {axis=-1} : f32[1,2,3,3] @softmax\n"
      "  %y = MatMul(%p, %v) : f32[1,2,3,4] @pv\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_attention, &stats), text);
  PatternStats s = stats_of(stats, "fuse_attention", "sdpa_to_attention");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "Softmax input is not the scaled MatMul: found Sigmoid");
  EXPECT_EQ(s.near_misses[0].source_nodes, (std::vector<std::string>{"pv", "softmax"}));
}

TEST(FuseAttentionNearMiss, ProbabilitiesAlsoAnOutput) {
  PassStats stats;
  const std::string text =
      "graph g (%q: f32[1,2,3,4], %kt: f32[1,2,4,3], %v: f32[1,2,3,4]) -> (%y, %p) {\n"
      "  %s = MatMul(%q, %kt) : f32[1,2,3,3] @qk\n"
      "  %p = Softmax(%s) {axis=-1} : f32[1,2,3,3] @softmax\n"
      "  %y = MatMul(%p, %v) : f32[1,2,3,4] @pv\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_attention, &stats), text);
  PatternStats s = stats_of(stats, "fuse_attention", "sdpa_to_attention");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "Softmax output has other consumers");
}

TEST(FuseAttentionNearMiss, TwoDimensionalScores) {
  // [B, Sq, Skv] (one head) fuses since the seeds' module (OneHeadAttentionOn3dOperands); 2-D does not.
  PassStats stats;
  const std::string text =
      "graph g (%q: f32[3,8], %kt: f32[8,3], %v: f32[3,8]) -> (%y) {\n"
      "  %s = MatMul(%q, %kt) : f32[3,3] @qk\n"
      "  %p = Softmax(%s) {axis=-1} : f32[3,3] @softmax\n"
      "  %y = MatMul(%p, %v) : f32[3,8] @pv\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_attention, &stats), text);
  PatternStats s = stats_of(stats, "fuse_attention", "sdpa_to_attention");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "attention probabilities are not [B, H, Sq, Skv] or [B, Sq, Skv]: [3,3]");
}

}  // namespace
}  // namespace ferry
