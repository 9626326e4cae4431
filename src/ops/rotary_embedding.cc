// ops/rotary_embedding.cc — RotaryEmbedding (ONNX opset 23).
//
// X is [B, N, S, Dh] (4-D) or [B, S, N * Dh] (3-D, N = num_heads). The first
// rd = rotary_embedding_dim (0: Dh) features of each head are rotated in rd/2 pairs
// (x1, x2): halves (x1 = x[i], x2 = x[i + rd/2]) or, interleaved, neighbours
// (x1 = x[2i], x2 = x[2i + 1]):
//   x1' = cos * x1 - sin * x2,   x2' = sin * x1 + cos * x2
// with cos/sin = cache[position_ids[b, s], i] (caches [max_pos, rd/2]) or, without
// position_ids, cache[b, s, i] (caches [B, S, rd/2]). The other features pass through.
#include "ops/conv_util.h"
#include "ops/op_context.h"

namespace ferry {
namespace {

constexpr size_t kIn = 0, kCos = 1, kSin = 2, kPos = 3;

/// Heads and head size of X (4-D: from the shape; 3-D: from num_heads); -1 when unknown.
Result<std::pair<int64_t, int64_t>> heads_of(const NodeContext& ctx, const Shape& xs) {
  if (!xs.rank_known()) return std::pair<int64_t, int64_t>{-1, -1};
  if (xs.rank() == 4) return std::pair<int64_t, int64_t>{static_or_unknown(xs, 1), static_or_unknown(xs, 3)};
  if (xs.rank() != 3)
    return ctx.error("RotaryEmbedding needs X of rank 3 [batch, seq, hidden] or 4 [batch, heads, seq, head_size], got " +
                     xs.to_string());
  const std::optional<int64_t>& heads = ctx.attrs<RotaryEmbeddingAttrs>().num_heads;
  if (!heads) return ctx.error("RotaryEmbedding with a 3-D X needs the num_heads attribute");
  const int64_t n = *heads;
  if (n <= 0) return ctx.error("num_heads must be positive, got " + std::to_string(n));
  const int64_t hidden = static_or_unknown(xs, 2);
  if (hidden < 0) return std::pair<int64_t, int64_t>{n, -1};
  if (hidden % n != 0)
    return ctx.error("hidden size " + std::to_string(hidden) + " is not a multiple of num_heads " + std::to_string(n));
  return std::pair<int64_t, int64_t>{n, hidden / n};
}

/// rotary_embedding_dim resolved against the head size (when known).
Result<int64_t> rotary_dim(const NodeContext& ctx, int64_t head) {
  int64_t rd = ctx.attrs<RotaryEmbeddingAttrs>().rotary_embedding_dim;
  if (rd < 0) return ctx.error("rotary_embedding_dim must be >= 0, got " + std::to_string(rd));
  if (rd == 0) rd = head;
  if (rd < 0) return rd;
  if (rd % 2 != 0) return ctx.error("the rotated size " + std::to_string(rd) + " must be even");
  if (head >= 0 && rd > head)
    return ctx.error("rotary_embedding_dim " + std::to_string(rd) + " exceeds the head size " + std::to_string(head));
  return rd;
}

}  // namespace

Status infer_RotaryEmbedding(InferContext& ctx) {
  const DType t = ctx.input_dtype(kIn);
  FERRY_TRY(check_float_dtype(t, "X"));
  FERRY_TRY(check_same_dtype(t, ctx.input_dtype(kCos), "cos_cache"));
  FERRY_TRY(check_same_dtype(t, ctx.input_dtype(kSin), "sin_cache"));
  const bool has_pos = ctx.has_input(kPos);
  if (has_pos && ctx.input_dtype(kPos) != DType::i64)
    return ctx.error(std::string("position_ids has dtype ") + dtype_name(ctx.input_dtype(kPos)) + ", expected i64");
  FERRY_ASSIGN_OR_RETURN(auto nh, heads_of(ctx, ctx.input_shape(kIn)));
  FERRY_ASSIGN_OR_RETURN(int64_t rd, rotary_dim(ctx, nh.second));
  for (size_t i : {kCos, kSin}) {
    const Shape& cs = ctx.input_shape(i);
    if (!cs.rank_known()) continue;
    if (cs.rank() != (has_pos ? 2 : 3))
      return ctx.error(std::string(i == kCos ? "cos_cache" : "sin_cache") + " has shape " + cs.to_string() +
                       (has_pos ? "; expected [max_position, rotary_dim / 2]" : "; expected [batch, seq, rotary_dim / 2]"));
    if (rd >= 0 && cs[size_t(cs.rank() - 1)].is_static() && cs[size_t(cs.rank() - 1)].value() != rd / 2)
      return ctx.error(std::string(i == kCos ? "cos_cache" : "sin_cache") + " has shape " + cs.to_string() +
                       "; its last dim must be rotary_dim / 2 = " + std::to_string(rd / 2));
  }
  ctx.set_output(0, t, ctx.input_shape(kIn));
  return Status::Ok();
}

Status ref_RotaryEmbedding(KernelContext& ctx) {
  const Tensor& X = ctx.input(kIn);
  const Tensor& cos_t = ctx.input(kCos);
  const Tensor& sin_t = ctx.input(kSin);
  FERRY_ASSIGN_OR_RETURN(auto nh, heads_of(ctx, X.shape()));
  const auto [N, Dh] = nh;
  FERRY_ASSIGN_OR_RETURN(int64_t rd, rotary_dim(ctx, Dh));
  const bool four_d = X.rank() == 4;
  const int64_t B = X.dim(0), S = X.dim(four_d ? 2 : 1), half = rd / 2;
  const bool has_pos = ctx.has_input(kPos);
  const bool cache_ok = has_pos ? cos_t.rank() == 2 && cos_t.dim(1) == half
                                : cos_t.dims() == std::vector<int64_t>{B, S, half};
  if (!cache_ok || sin_t.dims() != cos_t.dims())
    return ctx.error("cos_cache and sin_cache must both be " +
                     (has_pos ? "[max_position," + std::to_string(half) + "]"
                              : "[" + std::to_string(B) + "," + std::to_string(S) + "," + std::to_string(half) + "]") +
                     ", got " + cos_t.type_string() + " and " + sin_t.type_string());
  std::vector<int64_t> pos;
  if (has_pos) {
    const Tensor& p = ctx.input(kPos);
    if (p.dims() != std::vector<int64_t>{B, S})
      return ctx.error("position_ids has shape " + p.shape().to_string() + ", expected [" + std::to_string(B) + "," +
                       std::to_string(S) + "]");
    pos = p.to_int_vector();
    for (int64_t v : pos)
      if (v < 0 || v >= cos_t.dim(0))
        return ctx.error("position id " + std::to_string(v) + " is outside the caches' [0, " +
                         std::to_string(cos_t.dim(0)) + ")");
  }
  const std::vector<double> x = to_f64(X), cs = to_f64(cos_t), sn = to_f64(sin_t);
  std::vector<double> y = x;
  const bool interleaved = ctx.attrs<RotaryEmbeddingAttrs>().interleaved != 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t row = has_pos ? pos[size_t(b * S + s)] * half : (b * S + s) * half;
      for (int64_t n = 0; n < N; ++n) {
        const int64_t base = four_d ? ((b * N + n) * S + s) * Dh : ((b * S + s) * N + n) * Dh;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = base + (interleaved ? 2 * i : i), i2 = base + (interleaved ? 2 * i + 1 : i + half);
          const double c = cs[size_t(row + i)], sv = sn[size_t(row + i)];
          const double x1 = x[size_t(i1)], x2 = x[size_t(i2)];
          y[size_t(i1)] = c * x1 - sv * x2;
          y[size_t(i2)] = sv * x1 + c * x2;
        }
      }
    }
  FERRY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, X.dtype(), X.dims()));
  store_f64(y, *out);
  return Status::Ok();
}

}  // namespace ferry
