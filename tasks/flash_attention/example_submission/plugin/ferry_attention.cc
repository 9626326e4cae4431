// ferry_attention: ferry's own fused-Attention CPU kernel as a ferry_kernel_v1 plugin.
//
// The kernel is ferry's FlashAttention-2 forward (src/backends/cpu/native/
// attention_kernel.cc, tiled online softmax, AVX2 / AVX-512), compiled from
// ferry's sources as they are (CMakeLists.txt). This file is the adapter: it
// maps the plugin ABI's tensors and attributes onto the kernel's attn::Problem
// (pointers and strides), the job attention_problem.cc does for ferry's own
// KernelContext, and writes present_key / present_value.
//
// Covered: f32 Q, K, V in the 3-D ([B, S, H*D], q_num_heads / kv_num_heads) or
// 4-D ([B, H, S, D]) layout, grouped heads, scale, softcap, is_causal, a float
// or bool attn_mask broadcast to [B, Hq, Sq, T], past_key / past_value and the
// present outputs. Not covered (UNSUPPORTED): other dtypes, the
// qk_matmul_output output, a host without AVX2 and FMA.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "backends/cpu/native/attention_kernel.h"
#include "ferry/kernel_plugin.h"

namespace {

using ferry::attn::Problem;
using ferry::attn::View;
using KernelFn = void (*)(const Problem& p, float* const* present);

struct State {
  KernelFn kernel = nullptr;
  bool has_scale = false, causal = false;
  float scale = 0, softcap = 0;
  int64_t q_heads = 0, kv_heads = 0;
};

int32_t fail(char* msg, size_t n, int32_t code, const std::string& text) {
  std::snprintf(msg, n, "%s", text.c_str());
  return code;
}

std::string dims_text(const int64_t* d, int32_t rank) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i) s += ',';
    s += std::to_string(d[i]);
  }
  s += ']';
  return s;
}

/// The widest ISA of this host the kernel has code for, capped by FERRY_CPU_MAX_ISA
/// as ferry caps its own kernels; null without AVX2 + FMA.
KernelFn host_kernel(const char** isa) {
  __builtin_cpu_init();
  const char* cap = std::getenv("FERRY_CPU_MAX_ISA");
  const bool cap_avx2 = cap && !std::strcmp(cap, "avx2");
  const bool cap_none = cap && (!std::strcmp(cap, "generic") || !std::strcmp(cap, "reference"));
  if (!cap_none && !cap_avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    *isa = "avx512";
    return ferry::attn::run_f32__avx512;
  }
  if (!cap_none && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    *isa = "avx2";
    return ferry::attn::run_f32__avx2;
  }
  *isa = "none";
  return nullptr;
}

int32_t create(const ferry_kernel_node* node, void** state, char* msg, size_t n) {
  State s;
  const char* isa = nullptr;
  s.kernel = host_kernel(&isa);
  if (!s.kernel) return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "this kernel needs a CPU with AVX2 and FMA");
  if (node->num_outputs > 3)
    return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "the qk_matmul_output output (output 3) is not supported");
  for (int32_t i = 0; i < node->num_attrs; ++i) {
    const ferry_attr& a = node->attrs[i];
    const bool is_int = a.kind == FERRY_ATTR_INT, is_float = a.kind == FERRY_ATTR_FLOAT;
    if (!std::strcmp(a.name, "scale") && is_float) s.has_scale = true, s.scale = float(a.f);
    if (!std::strcmp(a.name, "softcap") && is_float) s.softcap = float(a.f);
    if (!std::strcmp(a.name, "is_causal") && is_int) s.causal = a.i != 0;
    if (!std::strcmp(a.name, "q_num_heads") && is_int) s.q_heads = a.i;
    if (!std::strcmp(a.name, "kv_num_heads") && is_int) s.kv_heads = a.i;
  }
  State* p = new (std::nothrow) State(s);
  if (!p) return fail(msg, n, FERRY_KERNEL_ERROR, "out of memory");
  *state = p;
  return FERRY_KERNEL_OK;
}

bool present(const ferry_tensor* in, int32_t n_in, int32_t i) {
  return i < n_in && in[i].dtype != FERRY_DTYPE_UNDEFINED;
}

const float* f32(const ferry_tensor& t) { return static_cast<const float*>(t.data); }

/// [B, S, H*E] (3-D) or [B, H, S, E] (4-D) as a View with E unit-strided.
View view_of(const ferry_tensor& t, bool three_d, int64_t e) {
  if (three_d) return {f32(t), t.dims[1] * t.dims[2], e, t.dims[2]};
  return {f32(t), t.dims[1] * t.dims[2] * t.dims[3], t.dims[2] * t.dims[3], t.dims[3]};
}

/// attn_mask broadcast to [B, Hq, Sq, mask_keys]: stride 0 on broadcast axes.
int32_t describe_mask(const ferry_tensor& m, Problem* p, char* msg, size_t n) {
  if (m.dtype != FERRY_DTYPE_F32 && m.dtype != FERRY_DTYPE_BOOL)
    return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "attn_mask must be f32 or bool");
  if (m.rank < 1 || m.rank > 4) return fail(msg, n, FERRY_KERNEL_ERROR, "attn_mask must have rank 1 to 4");
  p->mask_keys = m.dims[m.rank - 1];
  if (p->mask_keys > p->total())
    return fail(msg, n, FERRY_KERNEL_ERROR, "attn_mask has more keys than past_key and K together");
  const int64_t full[4] = {p->batch, p->q_heads, p->q_len, p->mask_keys};
  int64_t strides[4] = {0, 0, 0, 0}, stride = 1;
  for (int32_t axis = 3; axis >= 0; --axis) {
    const int32_t i = axis - (4 - m.rank);
    if (i < 0) continue;
    if (m.dims[i] != 1 && m.dims[i] != full[axis])
      return fail(msg, n, FERRY_KERNEL_ERROR,
                  "attn_mask " + dims_text(m.dims, m.rank) + " does not broadcast to [B, Hq, Sq, T]");
    strides[axis] = m.dims[i] == 1 ? 0 : stride;
    stride *= m.dims[i];
  }
  p->m_sb = strides[0], p->m_sh = strides[1], p->m_si = strides[2], p->m_sj = strides[3];
  if (m.dtype == FERRY_DTYPE_F32)
    p->mask_add = f32(m);
  else
    p->mask_keep = static_cast<const bool*>(m.data);
  return FERRY_KERNEL_OK;
}

/// Reads Q, K, V, attn_mask and past_key / past_value into p; checks the outputs' shapes.
int32_t describe(const State& st, const ferry_tensor* in, int32_t n_in, const ferry_tensor* out, int32_t n_out,
                 Problem* p, char* msg, size_t n) {
  if (n_in < 3 || n_out < 1) return fail(msg, n, FERRY_KERNEL_ERROR, "Attention needs Q, K, V and the output Y");
  const ferry_tensor &q = in[0], &k = in[1], &v = in[2];
  for (int32_t i = 0; i < 3; ++i)
    if (in[i].dtype != FERRY_DTYPE_F32) return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "only f32 Q, K, V");
  if (q.rank != k.rank || q.rank != v.rank || (q.rank != 3 && q.rank != 4))
    return fail(msg, n, FERRY_KERNEL_ERROR, "Q, K, V must all be 3-D or all 4-D");
  const bool three_d = q.rank == 3;
  p->q_heads = three_d ? st.q_heads : q.dims[1];
  p->kv_heads = three_d ? st.kv_heads : k.dims[1];
  if (p->q_heads <= 0 || p->kv_heads <= 0 || p->q_heads % p->kv_heads ||
      (three_d && (q.dims[2] % p->q_heads || k.dims[2] % p->kv_heads || v.dims[2] % p->kv_heads)))
    return fail(msg, n, FERRY_KERNEL_ERROR, "bad head counts (q_num_heads / kv_num_heads)");
  p->batch = q.dims[0];
  p->q_len = three_d ? q.dims[1] : q.dims[2];
  p->kv_len = three_d ? k.dims[1] : k.dims[2];
  p->head_dim = three_d ? q.dims[2] / p->q_heads : q.dims[3];
  p->v_dim = three_d ? v.dims[2] / p->kv_heads : v.dims[3];
  const int64_t dk = three_d ? k.dims[2] / p->kv_heads : k.dims[3];
  const int64_t v_len = three_d ? v.dims[1] : v.dims[2];
  if (dk != p->head_dim || k.dims[0] != p->batch || v.dims[0] != p->batch || v_len != p->kv_len ||
      (!three_d && v.dims[1] != p->kv_heads))
    return fail(msg, n, FERRY_KERNEL_ERROR, "Q, K, V shapes do not agree");
  p->q = view_of(q, three_d, p->head_dim);
  p->k = view_of(k, three_d, p->head_dim);
  p->v = view_of(v, three_d, p->v_dim);
  if (present(in, n_in, 4) != present(in, n_in, 5))
    return fail(msg, n, FERRY_KERNEL_ERROR, "past_key and past_value come together");
  if (present(in, n_in, 4)) {
    const ferry_tensor &pk = in[4], &pv = in[5];
    if (pk.dtype != FERRY_DTYPE_F32 || pv.dtype != FERRY_DTYPE_F32 || pk.rank != 4 || pv.rank != 4)
      return fail(msg, n, FERRY_KERNEL_UNSUPPORTED, "past_key / past_value must be 4-D f32");
    p->past = pk.dims[2];
    const int64_t want_k[4] = {p->batch, p->kv_heads, p->past, p->head_dim};
    const int64_t want_v[4] = {p->batch, p->kv_heads, p->past, p->v_dim};
    if (std::memcmp(pk.dims, want_k, sizeof want_k) || std::memcmp(pv.dims, want_v, sizeof want_v))
      return fail(msg, n, FERRY_KERNEL_ERROR, "past_key / past_value shapes do not agree with K and V");
    p->past_k = view_of(pk, false, p->head_dim);
    p->past_v = view_of(pv, false, p->v_dim);
  }
  if (present(in, n_in, 3)) {
    const int32_t rc = describe_mask(in[3], p, msg, n);
    if (rc != FERRY_KERNEL_OK) return rc;
  }
  const int64_t y3[3] = {p->batch, p->q_len, p->q_heads * p->v_dim};
  const int64_t y4[4] = {p->batch, p->q_heads, p->q_len, p->v_dim};
  const ferry_tensor& y = out[0];
  if (y.dtype != FERRY_DTYPE_F32 || y.rank != q.rank ||
      std::memcmp(y.dims, three_d ? y3 : y4, sizeof(int64_t) * y.rank))
    return fail(msg, n, FERRY_KERNEL_ERROR,
                "output Y is " + dims_text(y.dims, y.rank) + ", expected " + dims_text(three_d ? y3 : y4, q.rank));
  for (int32_t o = 1; o < n_out; ++o) {
    const int64_t want[4] = {p->batch, p->kv_heads, p->total(), o == 1 ? p->head_dim : p->v_dim};
    if (out[o].dtype != FERRY_DTYPE_F32 || out[o].rank != 4 || std::memcmp(out[o].dims, want, sizeof want))
      return fail(msg, n, FERRY_KERNEL_ERROR,
                  "output " + std::to_string(o) + " is " + dims_text(out[o].dims, out[o].rank) + ", expected " +
                      dims_text(want, 4));
  }
  p->out = static_cast<float*>(y.data);
  if (three_d)
    p->out_sb = p->q_len * p->q_heads * p->v_dim, p->out_sh = p->v_dim, p->out_ss = p->q_heads * p->v_dim;
  else
    p->out_sb = p->q_heads * p->q_len * p->v_dim, p->out_sh = p->q_len * p->v_dim, p->out_ss = p->v_dim;
  p->scale = st.has_scale ? st.scale : float(1.0 / std::sqrt(double(p->head_dim)));
  p->softcap = st.softcap;
  p->causal = st.causal;
  return FERRY_KERNEL_OK;
}

/// present_key / present_value = concat(past, new) along the sequence, [B, Hkv, T, E].
void write_present(const Problem& p, const ferry_tensor* out, int32_t n_out) {
  for (int32_t o = 1; o < n_out; ++o) {
    const View& past = o == 1 ? p.past_k : p.past_v;
    const View& cur = o == 1 ? p.k : p.v;
    const int64_t e = o == 1 ? p.head_dim : p.v_dim;
    float* dst = static_cast<float*>(out[o].data);
    for (int64_t r = 0; r < p.batch * p.kv_heads; ++r) {
      const int64_t b = r / p.kv_heads, h = r % p.kv_heads;
      float* d = dst + r * p.total() * e;
      if (p.past > 0) std::memcpy(d, past.row(b, h, 0), size_t(p.past * e) * sizeof(float));
      for (int64_t s = 0; s < p.kv_len; ++s)
        std::memcpy(d + (p.past + s) * e, cur.row(b, h, s), size_t(e) * sizeof(float));
    }
  }
}

int32_t run(void* state, const ferry_tensor* in, int32_t n_in, ferry_tensor* out, int32_t n_out, char* msg, size_t n) {
  const State& st = *static_cast<const State*>(state);
  Problem p;
  const int32_t rc = describe(st, in, n_in, out, n_out, &p, msg, n);
  if (rc != FERRY_KERNEL_OK) return rc;
  // One query that sees every key: the kernel fills present as it streams the cache.
  float* cache[2] = {nullptr, nullptr};
  const bool fused = n_out == 3 && p.q_len == 1 && p.key_end(0) == p.total();
  if (fused)
    cache[0] = static_cast<float*>(out[1].data), cache[1] = static_cast<float*>(out[2].data);
  else
    write_present(p, out, n_out);
  st.kernel(p, fused ? cache : nullptr);
  return FERRY_KERNEL_OK;
}

void destroy(void* state) { delete static_cast<State*>(state); }

const int32_t kDtypes[] = {FERRY_DTYPE_F32, FERRY_DTYPE_UNDEFINED};

}  // namespace

extern "C" FERRY_KERNEL_EXPORT const ferry_kernel_v1* ferry_kernel_entry(uint32_t host_abi_version) {
  if (host_abi_version != FERRY_KERNEL_ABI_VERSION) return nullptr;
  static ferry_kernel_v1 table = {
      FERRY_KERNEL_ABI_VERSION, sizeof(ferry_kernel_v1), "", "Attention", kDtypes, create, nullptr, run, destroy};
  static char name[64];
  const char* isa = nullptr;
  host_kernel(&isa);
  std::snprintf(name, sizeof name, "ferry_attention_f32__%s", isa);
  table.name = name;
  return &table;
}
