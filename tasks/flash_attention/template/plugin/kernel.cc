// @KERNEL@: ferry's Attention op as a kernel plugin (include/ferry/kernel_plugin.h).
// The starting point of the FlashAttention task: correct and plain -- one query row
// at a time, all its scores in a buffer, softmax, weighted sum of V. Make it fast
// (blocking over keys with an online softmax, SIMD, threads) and keep it correct:
// `ferry evaluate` compares it with the baseline on 5 seeded inputs.
//
// Attention(Q, K, V) as ferry runs it (src/ops/attention.cc, ONNX opset 23):
//   3-D Q [B, Sq, Hq*D], K [B, Skv, Hkv*D], V [B, Skv, Hkv*Dv]  (q_num_heads / kv_num_heads attributes)
//   or 4-D Q [B, Hq, Sq, D], K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv];  Y like Q with Dv.
//   Y = softmax(scale * Q K^T (+ causal mask)) V,  scale default 1/sqrt(D); head h reads kv head h / (Hq/Hkv).
// Not handled here (UNSUPPORTED): attn_mask, past_key/past_value, softcap, extra outputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "ferry/kernel_plugin.h"

namespace {

struct State {
  bool has_scale = false, causal = false;
  double scale = 0;
  int64_t q_heads = 0, kv_heads = 0;
};

int32_t fail(char* msg, size_t n, int32_t code, const char* text) {
  std::snprintf(msg, n, "%s", text);
  return code;
}

int32_t create(const ferry_kernel_node* node, void** state, char* msg, size_t n) {
  State* s = new (std::nothrow) State();
  if (!s) return fail(msg, n, FERRY_KERNEL_ERROR, "out of memory");
  for (int32_t i = 0; i < node->num_attrs; ++i) {
    const ferry_attr& a = node->attrs[i];
    if (!std::strcmp(a.name, "scale") && a.kind == FERRY_ATTR_FLOAT) s->has_scale = true, s->scale = float(a.f);
    if (!std::strcmp(a.name, "is_causal") && a.kind == FERRY_ATTR_INT) s->causal = a.i != 0;
    if (!std::strcmp(a.name, "q_num_heads") && a.kind == FERRY_ATTR_INT) s->q_heads = a.i;
    if (!std::strcmp(a.name, "kv_num_heads") && a.kind == FERRY_ATTR_INT) s->kv_heads = a.i;
    if (!std::strcmp(a.name, "softcap") && a.kind == FERRY_ATTR_FLOAT && a.f != 0) {
      delete s;
      return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "softcap is not supported");
    }
    if (!std::strcmp(a.name, "qk_matmul_output_mode") && a.kind == FERRY_ATTR_INT && a.i != 0) {
      delete s;
      return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "qk_matmul_output_mode is not supported");
    }
  }
  if (node->num_outputs != 1) {
    delete s;
    return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "only the output Y is supported (no present_key/value, qk output)");
  }
  *state = s;
  return FERRY_KERNEL_OK;
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
  const bool three_d = q.rank == 3;
  if (q.rank != k.rank || q.rank != v.rank || (q.rank != 3 && q.rank != 4))
    return fail(msg, n, FERRY_KERNEL_ERROR, "Q, K, V must all be 3-D or all 4-D");
  const int64_t hq = three_d ? st.q_heads : q.dims[1], hkv = three_d ? st.kv_heads : k.dims[1];
  if (hq <= 0 || hkv <= 0 || hq % hkv) return fail(msg, n, FERRY_KERNEL_ERROR, "bad head counts");
  const int64_t b = q.dims[0], sq = three_d ? q.dims[1] : q.dims[2], skv = three_d ? k.dims[1] : k.dims[2];
  const int64_t d = three_d ? q.dims[2] / hq : q.dims[3], dv = three_d ? v.dims[2] / hkv : v.dims[3];
  const double scale = st.has_scale ? st.scale : 1.0 / std::sqrt(double(d));
  // Row r of head h in batch bb: its offset and the stride between rows, for either layout.
  auto row = [three_d](int64_t bb, int64_t h, int64_t r, int64_t heads, int64_t seq, int64_t e) {
    return three_d ? ((bb * seq + r) * heads + h) * e : ((bb * heads + h) * seq + r) * e;
  };
  const float* Q = static_cast<const float*>(q.data);
  const float* K = static_cast<const float*>(k.data);
  const float* V = static_cast<const float*>(v.data);
  float* Y = static_cast<float*>(out[0].data);
  std::vector<double> p(static_cast<size_t>(skv));
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kh = h / (hq / hkv);
      for (int64_t i = 0; i < sq; ++i) {
        const float* qi = Q + row(bb, h, i, hq, sq, d);
        const int64_t keys = st.causal ? std::min(skv, i + 1) : skv;
        double mx = -INFINITY;
        for (int64_t j = 0; j < keys; ++j) {
          const float* kj = K + row(bb, kh, j, hkv, skv, d);
          double dot = 0;
          for (int64_t e = 0; e < d; ++e) dot += double(qi[e]) * kj[e];
          p[size_t(j)] = dot * scale;
          mx = std::max(mx, p[size_t(j)]);
        }
        double sum = 0;
        for (int64_t j = 0; j < keys; ++j) sum += (p[size_t(j)] = std::exp(p[size_t(j)] - mx));
        float* yi = Y + row(bb, h, i, hq, sq, dv);
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < keys; ++j) acc += p[size_t(j)] * V[row(bb, kh, j, hkv, skv, dv) + e];
          yi[e] = keys ? float(acc / sum) : 0.0f;
        }
      }
    }
  return FERRY_KERNEL_OK;
}

void destroy(void* state) { delete static_cast<State*>(state); }

const int32_t kDtypes[] = {FERRY_DTYPE_F32, FERRY_DTYPE_UNDEFINED};

const ferry_kernel_v1 kKernel = {
    FERRY_KERNEL_ABI_VERSION, sizeof(ferry_kernel_v1), "@KERNEL@", "Attention", kDtypes, create, nullptr, run, destroy,
};

}  // namespace

extern "C" FERRY_KERNEL_EXPORT const ferry_kernel_v1* ferry_kernel_entry(uint32_t host_abi_version) {
  return host_abi_version == FERRY_KERNEL_ABI_VERSION ? &kKernel : nullptr;
}
