// backends/cpu/native/attention_f32.cc — the fused Attention op (ONNX opset 23)
// in f32: FlashAttention-2 forward, Y = softmax(scale Q K'^T + bias) V' with
// K' = [past_key; K], V' = [past_value; V] streamed in place, never forming
// the [Sq x T] score matrix (attention_tile.h has the algorithm).
//
// Work items are (batch, query head, block of L query rows), split over the
// OpenMP pool dynamically (causal blocks differ in cost; each item is computed
// by one thread in a fixed order, so results do not depend on the schedule).
// Up to kRowQueries queries (decode) take the row kernel (attention_row.h); a
// single query that sees every key writes present_key/present_value as it
// streams the cache (one read of the cache instead of two).
// Each thread keeps one scratch block of L (D + N + Dv + 4) floats, grown and
// never shrunk (thread_local: a FnStep gets no scratch from the session), so
// steady-state runs do not allocate.
// What the fast path does not cover (non-f32 inputs, qk_matmul_output, shapes
// the reference must reject) runs on the reference kernel, which owns the errors.
#include <cstdlib>
#include <memory>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/attention_row.h"

namespace ferry {
namespace {

using BlockFn = void (*)(const attn::Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, float* scratch);

// AVX2: 16 ymm = 4 x 3 accumulators + 3 B vectors + 1 broadcast. AVX-512: 32 zmm = 8 x 3 + 3 + 1.
using CfgAvx2 = attn::Config<8, 4, 3, 48, 64>;
using CfgAvx512 = attn::Config<16, 8, 3, 96, 64>;
// At most one vector of queries: one lane vector a tile, so a short block costs W lanes of work
// instead of C*W; 12 (AVX2) / 24 (AVX-512) key rows a strip.
using CfgAvx2Narrow = attn::Config<8, 12, 1, 8, 64>;
using CfgAvx512Narrow = attn::Config<16, 24, 1, 16, 64>;

// At most kRowQueries queries (decode steps): one query row at a time, vectorized along the head
// dimension (attention_row.h); reading K/V once per query beats padding a tile of query lanes.
constexpr int64_t kRowQueries = 4;
using RowFn = void (*)(const attn::Problem& p, int64_t b, int64_t h, int64_t i, float* scratch, float* const* present);
FERRY_TARGET_AVX2 void row__avx2(const attn::Problem& p, int64_t b, int64_t h, int64_t i, float* s,
                                 float* const* present) {
  attn::query_row<8>(p, b, h, i, s, present);
}
FERRY_TARGET_AVX512 void row__avx512(const attn::Problem& p, int64_t b, int64_t h, int64_t i, float* s,
                                     float* const* present) {
  attn::query_row<16>(p, b, h, i, s, present);
}

#define FERRY_ATTENTION_BLOCK(name, target, cfg)                                                        \
  target void name(const attn::Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, float* s) { \
    attn::query_block<cfg>(p, b, h, i0, rows, s);                                                      \
  }
FERRY_ATTENTION_BLOCK(block__avx2, FERRY_TARGET_AVX2, CfgAvx2)
FERRY_ATTENTION_BLOCK(block_narrow__avx2, FERRY_TARGET_AVX2, CfgAvx2Narrow)
FERRY_ATTENTION_BLOCK(block__avx512, FERRY_TARGET_AVX512, CfgAvx512)
FERRY_ATTENTION_BLOCK(block_narrow__avx512, FERRY_TARGET_AVX512, CfgAvx512Narrow)
#undef FERRY_ATTENTION_BLOCK

/// This thread's scratch of at least `floats` floats, 64-byte aligned.
float* thread_scratch(int64_t floats) {
  struct Free {
    void operator()(float* f) const { std::free(f); }
  };
  thread_local std::unique_ptr<float, Free> buf;
  thread_local int64_t cap = 0;
  if (cap < floats) {
    const size_t bytes = (size_t(floats) * sizeof(float) + 63) / 64 * 64;
    buf.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    cap = floats;
  }
  return buf.get();
}

template <class Cfg>
Status run_blocks(const attn::Problem& p, BlockFn block) {
  const int64_t blocks = (p.q_len + Cfg::L - 1) / Cfg::L, items = p.batch * p.q_heads * blocks;
  const int64_t floats = attn::Block<Cfg>::floats(p);
#pragma omp parallel for schedule(dynamic, 1) if (items > 1)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t bh = it / blocks, i0 = (it % blocks) * Cfg::L;
    block(p, bh / p.q_heads, bh % p.q_heads, i0, std::min<int64_t>(Cfg::L, p.q_len - i0), thread_scratch(floats));
  }
  return Status::Ok();
}

/// present_key / present_value when the decode rows can write them as they stream the
/// cache: both requested, one query that sees every key. Null otherwise (write_present).
bool fused_present(KernelContext& ctx, const attn::Problem& p, float* present[2]) {
  if (ctx.num_outputs() < 3 || p.q_len != 1 || p.key_end(0) != p.total()) return false;
  present[0] = ctx.output(1).data<float>(), present[1] = ctx.output(2).data<float>();
  return present[0] && present[1];
}

Status run_rows(KernelContext& ctx, const attn::Problem& p, RowFn row) {
  float* present[2] = {nullptr, nullptr};
  const bool fused = fused_present(ctx, p, present);
  if (!fused) attn::write_present(ctx, p);
  const int64_t items = p.batch * p.q_heads * p.q_len, group = p.q_heads / p.kv_heads;
  const int64_t floats = p.head_dim + p.v_dim + attn::kRowKeys;
#pragma omp parallel for schedule(dynamic, 1) if (items > 1)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t bh = it / p.q_len, b = bh / p.q_heads, h = bh % p.q_heads;
    // The first query head of each kv group copies that kv head's rows into present.
    float* mine[2] = {nullptr, nullptr};
    if (fused && h % group == 0) {
      const int64_t r = b * p.kv_heads + h / group;
      mine[0] = present[0] + r * p.total() * p.head_dim, mine[1] = present[1] + r * p.total() * p.v_dim;
    }
    row(p, b, h, it % p.q_len, thread_scratch(floats), mine[0] ? mine : nullptr);
  }
  return Status::Ok();
}

template <class Wide, class Narrow>
Status run_attention(KernelContext& ctx, RowFn row, BlockFn narrow, BlockFn wide) {
  attn::Problem p;
  if (!attn::describe(ctx, &p)) return ref_Attention(ctx);
  if (p.q_len <= kRowQueries) return run_rows(ctx, p, row);
  attn::write_present(ctx, p);
  return p.q_len <= Narrow::L ? run_blocks<Narrow>(p, narrow) : run_blocks<Wide>(p, wide);
}

}  // namespace

Status attention_f32__avx2(KernelContext& ctx) {
  return run_attention<CfgAvx2, CfgAvx2Narrow>(ctx, row__avx2, block_narrow__avx2, block__avx2);
}
Status attention_f32__avx512(KernelContext& ctx) {
  return run_attention<CfgAvx512, CfgAvx512Narrow>(ctx, row__avx512, block_narrow__avx512, block__avx512);
}

}  // namespace ferry
