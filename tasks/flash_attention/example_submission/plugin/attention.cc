// attention_f32_blocked: ferry's Attention op (ONNX opset 23) as a kernel plugin.
//
//   Y = softmax(scale * Q K^T (+ causal mask)) V        per batch and head
//
// Blocked like FlashAttention: a block of kBq query rows walks K and V in blocks
// of kBk keys with an online softmax -- per row a running max m, a running sum l
// and an unnormalized accumulator a:
//   m' = max(m, max_j s_j);  l' = l e^(m - m') + sum_j e^(s_j - m');  a' = a e^(m - m') + sum_j e^(s_j - m') v_j
// and Y = a / l at the end, so the [Sq, Skv] score matrix never exists. Blocks of
// (batch, head, query block) run in parallel (OpenMP); dot products and the V
// updates are contiguous loops over the head dimension, vectorized by the compiler.
// Layouts: 3-D [B, S, H*D] (q_num_heads / kv_num_heads) or 4-D [B, H, S, D];
// grouped heads (Hq a multiple of Hkv). Not handled (UNSUPPORTED): attn_mask,
// past_key/past_value, softcap, qk_matmul_output_mode, outputs beyond Y.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "ferry/kernel_plugin.h"

namespace {

constexpr int64_t kBq = 16;  // query rows per block
constexpr int64_t kBk = 64;  // keys per block

struct State {
  bool has_scale = false, causal = false;
  float scale = 0;
  int64_t q_heads = 0, kv_heads = 0;
};

int32_t fail(char* msg, size_t n, int32_t code, const char* text) {
  std::snprintf(msg, n, "%s", text);
  return code;
}

int32_t create(const ferry_kernel_node* node, void** state, char* msg, size_t n) {
  if (node->num_outputs != 1) return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "only the output Y is supported");
  State s;
  for (int32_t i = 0; i < node->num_attrs; ++i) {
    const ferry_attr& a = node->attrs[i];
    if (!std::strcmp(a.name, "scale") && a.kind == FERRY_ATTR_FLOAT) s.has_scale = true, s.scale = float(a.f);
    if (!std::strcmp(a.name, "is_causal") && a.kind == FERRY_ATTR_INT) s.causal = a.i != 0;
    if (!std::strcmp(a.name, "q_num_heads") && a.kind == FERRY_ATTR_INT) s.q_heads = a.i;
    if (!std::strcmp(a.name, "kv_num_heads") && a.kind == FERRY_ATTR_INT) s.kv_heads = a.i;
    if (!std::strcmp(a.name, "softcap") && a.kind == FERRY_ATTR_FLOAT && a.f != 0)
      return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "softcap is not supported");
    if (!std::strcmp(a.name, "qk_matmul_output_mode") && a.kind == FERRY_ATTR_INT && a.i != 0)
      return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "qk_matmul_output_mode is not supported");
  }
  State* p = new (std::nothrow) State(s);
  if (!p) return fail(msg, n, FERRY_KERNEL_ERROR, "out of memory");
  *state = p;
  return FERRY_KERNEL_OK;
}

struct Geometry {
  bool three_d;
  int64_t b, hq, hkv, sq, skv, d, dv;
  // Offset of row r of head h in batch bb, and the distance between consecutive rows.
  int64_t row(int64_t bb, int64_t h, int64_t r, int64_t heads, int64_t seq, int64_t e) const {
    return three_d ? ((bb * seq + r) * heads + h) * e : ((bb * heads + h) * seq + r) * e;
  }
  int64_t stride(int64_t heads, int64_t e) const { return three_d ? heads * e : e; }
};

void attend_block(const Geometry& g, float scale, bool causal, const float* Q, const float* K, const float* V, float* Y,
                  int64_t bb, int64_t h, int64_t i0, std::vector<float>& acc) {
  const int64_t rows = std::min(kBq, g.sq - i0), kh = h / (g.hq / g.hkv);
  const int64_t qs = g.stride(g.hq, g.d), ks = g.stride(g.hkv, g.d), vs = g.stride(g.hkv, g.dv);
  const float* q0 = Q + g.row(bb, h, i0, g.hq, g.sq, g.d);
  const float* k0 = K + g.row(bb, kh, 0, g.hkv, g.skv, g.d);
  const float* v0 = V + g.row(bb, kh, 0, g.hkv, g.skv, g.dv);
  float m[kBq], l[kBq], s[kBq][kBk];
  std::fill(m, m + kBq, -INFINITY);
  std::fill(l, l + kBq, 0.0f);
  std::fill(acc.begin(), acc.begin() + rows * g.dv, 0.0f);
  const int64_t keys = causal ? std::min(g.skv, i0 + rows) : g.skv;
  for (int64_t j0 = 0; j0 < keys; j0 += kBk) {
    const int64_t cols = std::min(kBk, keys - j0);
    for (int64_t r = 0; r < rows; ++r) {
      const float* qr = q0 + r * qs;
      for (int64_t c = 0; c < cols; ++c) {
        const float* kc = k0 + (j0 + c) * ks;
        float dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int64_t e = 0; e < g.d; ++e) dot += qr[e] * kc[e];
        s[r][c] = causal && j0 + c > i0 + r ? -INFINITY : dot * scale;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      float mx = m[r];
      for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, s[r][c]);
      if (mx == -INFINITY) continue;  // every key so far masked
      const float corr = std::exp(m[r] - mx);
      float* a = acc.data() + r * g.dv;
      l[r] *= corr;
      for (int64_t e = 0; e < g.dv; ++e) a[e] *= corr;
      for (int64_t c = 0; c < cols; ++c) {
        const float p = std::exp(s[r][c] - mx);
        l[r] += p;
        const float* vc = v0 + (j0 + c) * vs;
#pragma omp simd
        for (int64_t e = 0; e < g.dv; ++e) a[e] += p * vc[e];
      }
      m[r] = mx;
    }
  }
  const int64_t ys = g.stride(g.hq, g.dv);
  float* y0 = Y + g.row(bb, h, i0, g.hq, g.sq, g.dv);
  for (int64_t r = 0; r < rows; ++r) {
    const float inv = l[r] > 0 ? 1.0f / l[r] : 0.0f;
    for (int64_t e = 0; e < g.dv; ++e) y0[r * ys + e] = acc[size_t(r * g.dv + e)] * inv;
  }
}

int32_t run(void* state, const ferry_tensor* in, int32_t num_inputs, ferry_tensor* out, int32_t num_outputs,
            char* msg, size_t n) {
  const State& st = *static_cast<const State*>(state);
  if (num_outputs != 1) return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "only the output Y is supported");
  for (int32_t i = 3; i < num_inputs; ++i)
    if (in[i].dtype != FERRY_DTYPE_UNDEFINED)
      return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "attn_mask and past_key/past_value are not supported");
  const ferry_tensor &q = in[0], &k = in[1], &v = in[2];
  if (q.dtype != FERRY_DTYPE_F32 || k.dtype != FERRY_DTYPE_F32 || v.dtype != FERRY_DTYPE_F32)
    return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "only f32 is supported");
  if (q.rank != k.rank || q.rank != v.rank || (q.rank != 3 && q.rank != 4))
    return fail(msg, n, FERRY_KERNEL_ERROR, "Q, K, V must all be 3-D or all 4-D");
  Geometry g;
  g.three_d = q.rank == 3;
  g.hq = g.three_d ? st.q_heads : q.dims[1];
  g.hkv = g.three_d ? st.kv_heads : k.dims[1];
  if (g.hq <= 0 || g.hkv <= 0 || g.hq % g.hkv) return fail(msg, n, FERRY_KERNEL_ERROR, "bad head counts");
  g.b = q.dims[0];
  g.sq = g.three_d ? q.dims[1] : q.dims[2];
  g.skv = g.three_d ? k.dims[1] : k.dims[2];
  g.d = g.three_d ? q.dims[2] / g.hq : q.dims[3];
  g.dv = g.three_d ? v.dims[2] / g.hkv : v.dims[3];
  const float scale = st.has_scale ? st.scale : float(1.0 / std::sqrt(double(g.d)));
  const float* Q = static_cast<const float*>(q.data);
  const float* K = static_cast<const float*>(k.data);
  const float* V = static_cast<const float*>(v.data);
  float* Y = static_cast<float*>(out[0].data);
  const int64_t qblocks = (g.sq + kBq - 1) / kBq, tasks = g.b * g.hq * qblocks;
#pragma omp parallel
  {
    std::vector<float> acc(size_t(kBq * g.dv));
#pragma omp for schedule(dynamic, 4)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t qb = t % qblocks, h = t / qblocks % g.hq, bb = t / qblocks / g.hq;
      attend_block(g, scale, st.causal, Q, K, V, Y, bb, h, qb * kBq, acc);
    }
  }
  return FERRY_KERNEL_OK;
}

void destroy(void* state) { delete static_cast<State*>(state); }

const int32_t kDtypes[] = {FERRY_DTYPE_F32, FERRY_DTYPE_UNDEFINED};

const ferry_kernel_v1 kKernel = {
    FERRY_KERNEL_ABI_VERSION, sizeof(ferry_kernel_v1), "attention_f32_blocked", "Attention", kDtypes, create, nullptr,
    run, destroy,
};

}  // namespace

extern "C" FERRY_KERNEL_EXPORT const ferry_kernel_v1* ferry_kernel_entry(uint32_t host_abi_version) {
  return host_abi_version == FERRY_KERNEL_ABI_VERSION ? &kKernel : nullptr;
}
