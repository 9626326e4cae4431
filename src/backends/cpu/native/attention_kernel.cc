// backends/cpu/native/attention_kernel.cc — the f32 FlashAttention-2 forward
// on an attn::Problem (attention_tile.h has the algorithm, attention_row.h the
// decode rows); attention_f32.cc is ferry's Attention kernel around it.
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
//
// It includes nothing of ferry but attention_*.h and simd_math.h (plain data
// and math): the FlashAttention task's reference plugin compiles this file as
// is.
#include "backends/cpu/native/attention_kernel.h"

#include <cstdlib>
#include <memory>

#include "backends/cpu/native/attention_row.h"

// The tile helpers take and return vectors; they are always inlined, so no vector crosses a call,
// but GCC reports the would-be ABI at the end of the file, past the headers' own push/pop.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ferry::attn {
namespace {

using BlockFn = void (*)(const Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, float* scratch);

// AVX2: 16 ymm = 4 x 3 accumulators + 3 B vectors + 1 broadcast. AVX-512: 32
// zmm = 6 x 4 + 4 + 1, blocks of 64 queries: against 8 x 3 with blocks of 96 (one
// load fewer per 24 FMAs, no block padded past 64 lanes at 128 / 512 / 1024 queries),
// measured in alternating rounds on a Sapphire-Rapids-class Xeon, 2 threads:
// 1.04x at [8,1,1024,64], 1.06x at [1,12,512,64], 1.21x at [1,12,128,64], 1.01x at
// [1,8,4096,64], 0.99x at [1,12,197,64].
using CfgAvx2 = Config<8, 4, 3, 48, 64>;
using CfgAvx512 = Config<16, 6, 4, 64, 64>;
// At most one vector of queries: one lane vector a tile, so a short block costs
// W lanes of work instead of C*W; 12 (AVX2) / 24 (AVX-512) key rows a strip.
using CfgAvx2Narrow = Config<8, 12, 1, 8, 64>;
using CfgAvx512Narrow = Config<16, 24, 1, 16, 64>;
// Up to 64 queries (Swin's 7x7 windows: 49): tiles of 2 vectors, so the lanes padded past the
// last query are under one tile of 2 W (49 queries: 64 lanes, where the wide tile's 3 W took 96,
// twice the work).
using CfgAvx2Medium = Config<8, 6, 2, 64, 64>;
using CfgAvx512Medium = Config<16, 12, 2, 64, 64>;

// At most kRowQueries queries (decode steps): one query row at a time,
// vectorized along the head dimension (attention_row.h); reading K/V once per
// query beats padding a tile of query lanes.
constexpr int64_t kRowQueries = 4;
using RowFn = void (*)(const Problem& p, int64_t b, int64_t h, int64_t i, float* scratch, float* const* present);
FERRY_TARGET_AVX2 void row__avx2(const Problem& p, int64_t b, int64_t h, int64_t i, float* s, float* const* present) {
  query_row<8>(p, b, h, i, s, present);
}
FERRY_TARGET_AVX512 void row__avx512(const Problem& p, int64_t b, int64_t h, int64_t i, float* s,
                                     float* const* present) {
  query_row<16>(p, b, h, i, s, present);
}

#define FERRY_ATTENTION_BLOCK(name, target, cfg)                                                 \
  target void name(const Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, float* s) { \
    query_block<cfg>(p, b, h, i0, rows, s);                                                      \
  }
FERRY_ATTENTION_BLOCK(block__avx2, FERRY_TARGET_AVX2, CfgAvx2)
FERRY_ATTENTION_BLOCK(block_narrow__avx2, FERRY_TARGET_AVX2, CfgAvx2Narrow)
FERRY_ATTENTION_BLOCK(block__avx512, FERRY_TARGET_AVX512, CfgAvx512)
FERRY_ATTENTION_BLOCK(block_narrow__avx512, FERRY_TARGET_AVX512, CfgAvx512Narrow)
FERRY_ATTENTION_BLOCK(block_medium__avx2, FERRY_TARGET_AVX2, CfgAvx2Medium)
FERRY_ATTENTION_BLOCK(block_medium__avx512, FERRY_TARGET_AVX512, CfgAvx512Medium)
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

/// Blocks of Cfg::L queries (the last may be short); the last `tail_rows` (< Cfg::L, 0: none) of
/// each head go to `tail`,
/// a narrower tile, so a short remainder (197 = 3 x 64 + 5) costs its own lanes, not a block's.
template <class Cfg, class Tail>
void run_blocks(const Problem& p, BlockFn block, BlockFn tail, int64_t tail_rows) {
  const int64_t full = (p.q_len - tail_rows + Cfg::L - 1) / Cfg::L, blocks = full + (tail_rows > 0 ? 1 : 0);
  const int64_t items = p.batch * p.q_heads * blocks;
  const int64_t floats = std::max(Block<Cfg>::floats(p), Block<Tail>::floats(p));
#pragma omp parallel for schedule(dynamic, 1) if (items > 1)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t bh = it / blocks, k = it % blocks, i0 = k * Cfg::L;
    if (k < full)
      block(p, bh / p.q_heads, bh % p.q_heads, i0, std::min<int64_t>(Cfg::L, p.q_len - tail_rows - i0),
            thread_scratch(floats));
    else
      tail(p, bh / p.q_heads, bh % p.q_heads, i0, tail_rows, thread_scratch(floats));
  }
}

void run_rows(const Problem& p, float* const* present, RowFn row) {
  const bool fused = present != nullptr;
  const int64_t items = p.batch * p.q_heads * p.q_len, group = p.q_heads / p.kv_heads;
  const int64_t floats = p.head_dim + p.v_dim + kRowKeys;
#pragma omp parallel for schedule(dynamic, 1) if (items > 1)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t bh = it / p.q_len, b = bh / p.q_heads, h = bh % p.q_heads;
    // The first query head of each kv group copies that kv head's rows into
    // present.
    float* mine[2] = {nullptr, nullptr};
    if (fused && h % group == 0) {
      const int64_t r = b * p.kv_heads + h / group;
      mine[0] = present[0] + r * p.total() * p.head_dim, mine[1] = present[1] + r * p.total() * p.v_dim;
    }
    row(p, b, h, it % p.q_len, thread_scratch(floats), mine[0] ? mine : nullptr);
  }
}

template <class Wide, class Medium, class Narrow>
void run(const Problem& p, float* const* present, RowFn row, BlockFn narrow, BlockFn medium, BlockFn wide) {
  if (p.q_len <= kRowQueries) return run_rows(p, present, row);
  if (p.q_len <= Narrow::L) return run_blocks<Narrow, Narrow>(p, narrow, narrow, 0);
  if (p.q_len <= Medium::L) return run_blocks<Medium, Medium>(p, medium, medium, 0);
  // The remainder past the last full wide block: on the narrow tile up to its lanes, on the medium
  // one up to its lanes (fewer padded lanes than the wide tile's), else a wide block of its own.
  const int64_t rem = p.q_len % Wide::L;
  if (rem > 0 && rem <= Narrow::LT) return run_blocks<Wide, Narrow>(p, wide, narrow, rem);
  if (rem > 0 && rem <= Medium::LT) return run_blocks<Wide, Medium>(p, wide, medium, rem);
  run_blocks<Wide, Wide>(p, wide, wide, rem);
}

}  // namespace

void run_f32__avx2(const Problem& p, float* const* present) {
  run<CfgAvx2, CfgAvx2Medium, CfgAvx2Narrow>(p, present, row__avx2, block_narrow__avx2, block_medium__avx2, block__avx2);
}
void run_f32__avx512(const Problem& p, float* const* present) {
  run<CfgAvx512, CfgAvx512Medium, CfgAvx512Narrow>(p, present, row__avx512, block_narrow__avx512, block_medium__avx512,
                                                   block__avx512);
}

}  // namespace ferry::attn
