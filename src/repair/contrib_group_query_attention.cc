// Repair of ONNX Runtime's GroupQueryAttention (com.microsoft), the decoder attention
// over a KV cache that ORT GenAI's model builder writes:
//   GroupQueryAttention(query, key, value, past_key, past_value, seqlens_k,
//                       total_sequence_length [, cos_cache, sin_cache])
//     -> output [B, S, Nq H], present_key / present_value [B, Nkv, L, H]
// as ONNX Runtime's CPU kernel computes it (measured in tests/repair/test_group_query_attention.py):
//   past_b   = 0 on the first prompt (S = total_sequence_length), else seqlens_k[b] + 1 - S
//   pos[b,i] = past_b + i          (the rotary position of query / key row i)
//   L        = max(past length P, total_sequence_length)
//   present[b, :, j] = past[b, :, j] for j < past_b, new K[b, :, j - past_b] for past_b <= j < past_b + S,
//                      0 after (ORT clears the rest of the buffer)
//   query i of row b attends present key j iff j <= pos[b, i] and j <= seqlens_k[b]
// with Nq / Nkv query / key heads sharing groups (ONNX Attention's grouped-query form).
// The new keys are placed by GatherElements + Where (a padded batch writes each row at its
// own offset, as ORT's shared buffer does), the mask is a boolean [B, 1, S, L].
#include <string>
#include <vector>

#include "repair/contrib_rules.h"
#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

using onnx_import::OnnxNode;

constexpr std::initializer_list<const char*> kAttrs = {"num_heads", "kv_num_heads", "scale", "softcap",
                                                       "local_window_size", "do_rotary", "rotary_interleaved",
                                                       "smooth_softmax"};

struct Heads {
  int64_t q = 0, kv = 0, size = 0;
};

Heads heads_of(const OnnxNode& n) {
  Heads h;
  h.q = attr_int(n, "num_heads").value_or(0);
  h.kv = attr_int(n, "kv_num_heads").value_or(0);
  const Value* q = n.input(0);
  const int64_t hidden = q && q->shape().rank() == 3 && q->shape()[2].is_static() ? q->shape()[2].value() : -1;
  const int64_t per_token = n.input(1) ? h.q : h.q + 2 * h.kv;  // packed QKV without key / value
  if (hidden > 0 && per_token > 0 && hidden % per_token == 0) h.size = hidden / per_token;
  return h;
}

Value* i64(OnnxNode& n, int64_t v, const char* what) { return n.constant(Tensor::scalar<int64_t>(v), what); }

Value* dim(OnnxNode& n, Value* v, int64_t axis) {
  return helper(n, Op::Gather, {n.shape_of(v), i64(n, axis, "axis")});
}

Value* to_bnsh(OnnxNode& n, Value* x, int64_t heads, int64_t size) {
  Value* r = helper(n, Op::Reshape, {x, n.const_i64({0, 0, heads, size}, "bsnh")});
  AttrMap perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1, 3});
  return helper(n, Op::Transpose, {r}, perm);
}

Value* rotary(OnnxNode& n, Value* x, int64_t heads, const Heads& h, Value* pos) {
  AttrMap a;
  a.set("num_heads", heads);
  a.set("interleaved", n.int_or("rotary_interleaved", 0));
  const Value* cos = n.input(7);
  if (cos->shape().rank() == 2 && cos->shape()[1].is_static() && cos->shape()[1].value() * 2 != h.size)
    a.set("rotary_embedding_dim", cos->shape()[1].value() * 2);
  return helper(n, Op::RotaryEmbedding, {x, n.input(7), n.input(8), pos}, a);
}

/// present = the past cache with each row's new keys written at its offset past_b: [B, Nkv, L, H].
Value* present(OnnxNode& n, Value* past, Value* fresh, Value* rel, Value* s, Value* l, Value* p) {
  // rel[b, j] = j - past_b: the new row j stands for, where 0 <= rel < S
  Value* zero = i64(n, 0, "zero");
  Value* in_new = helper(n, Op::And, {helper(n, Op::GreaterOrEqual, {rel, zero}), helper(n, Op::Less, {rel, s})});
  Value* idx = helper(n, Op::Clip, {rel, zero, helper(n, Op::Sub, {s, i64(n, 1, "one")})});
  Value* idx4 = helper(n, Op::Unsqueeze, {idx, n.const_i64({1, 3}, "bnsh_axes")});  // [B, 1, L, 1]
  AttrMap c0;
  c0.set("axis", int64_t(0));
  Value* axis0 = n.const_i64({0}, "axis0");
  Value* full = helper(n, Op::Concat, {helper(n, Op::Unsqueeze, {dim(n, fresh, 0), axis0}),
                                       helper(n, Op::Unsqueeze, {dim(n, fresh, 1), axis0}),
                                       helper(n, Op::Unsqueeze, {l, axis0}), helper(n, Op::Unsqueeze, {dim(n, fresh, 3), axis0})},
                       c0);
  AttrMap ax2;
  ax2.set("axis", int64_t(2));
  Value* moved = helper(n, Op::GatherElements, {fresh, helper(n, Op::Expand, {idx4, full})}, ax2);
  Value* grow = helper(n, Op::Unsqueeze, {helper(n, Op::Sub, {l, p}), axis0});
  Value* pads = helper(n, Op::Concat, {n.const_i64({0, 0, 0, 0, 0, 0}, "pads_head"), grow, n.const_i64({0}, "pads_tail")},
                       c0);
  Value* padded = helper(n, Op::Pad, {past, pads});
  // ORT keeps the past only before the row's new keys and zeroes the rest of the buffer
  Value* before = helper(n, Op::Unsqueeze, {helper(n, Op::Less, {rel, zero}), n.const_i64({1, 3}, "bnsh_axes")});
  Value* kept = helper(n, Op::Where, {before, padded, n.constant(Tensor::scalar<float>(0.f), "cleared")});
  return helper(n, Op::Where, {helper(n, Op::Unsqueeze, {in_new, n.const_i64({1, 3}, "bnsh_axes")}), moved, kept});
}

}  // namespace

std::string why_not_GroupQueryAttention(const OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, kAttrs), not_f32(n, {0, 1, 2, 3, 4, 7, 8})});
  if (!r.empty()) return r;
  for (size_t i : {0, 5, 6})
    if (!n.input(i)) return "input " + std::to_string(i) + " is missing";
  for (size_t i = 9; i < n.num_inputs(); ++i)
    if (n.input(i)) return "input " + std::to_string(i) + " (position_ids, attention_bias, head_sink) is not handled";
  if (attr_int(n, "local_window_size").value_or(-1) != -1) return "local_window_size (sliding window) is not handled";
  if (attr_int(n, "smooth_softmax").value_or(0) != 0) return "smooth_softmax = 1 is not handled";
  const Heads h = heads_of(n);
  if (h.q <= 0 || h.kv <= 0 || h.q % h.kv) return "num_heads must be a positive multiple of kv_num_heads";
  if (input_rank(n, 0) != 3) return "query must be [B, S, hidden] (rank 3)";
  if (h.size <= 0) return "query's hidden size must be static and divisible into the heads";
  if (!n.input(1) != !n.input(2)) return "key and value must both be given or both be absent (packed QKV)";
  if (!n.input(3) != !n.input(4)) return "past_key and past_value must both be given or both be absent";
  if (n.input(3) && input_rank(n, 3) != 4) return "past_key must be [B, Nkv, P, H] (BNSH)";
  const bool rot = attr_int(n, "do_rotary").value_or(0) != 0;
  if (rot && (!n.input(7) || !n.input(8))) return "do_rotary = 1 needs cos_cache and sin_cache";
  if (!rot && (n.input(7) || n.input(8))) return "cos_cache / sin_cache without do_rotary are not handled";
  return "";
}

Status repair_GroupQueryAttention(OnnxNode& n) {
  for (const char* a : kAttrs) n.ignore(a);
  const Heads h = heads_of(n);
  Value *q = n.input(0), *k = n.input(1), *v = n.input(2);
  if (!k) {
    AttrMap a;
    a.set("axis", int64_t(-1));
    Node* parts = n.emit_helper(Op::Split, {q, n.const_i64({h.q * h.size, h.kv * h.size, h.kv * h.size}, "qkv_sizes")},
                                a, 3);
    q = parts->output(0), k = parts->output(1), v = parts->output(2);
  }
  Value* zero = i64(n, 0, "zero");
  Value* s = dim(n, q, 1);
  Value* total = cast(n, helper(n, Op::Reshape, {n.input(6), n.const_i64({}, "scalar")}), "i64");
  Value* last = cast(n, n.input(5), "i64");  // seqlens_k[b] = the row's total length - 1
  Value* first = helper(n, Op::Equal, {s, total});
  Value* past_b = helper(n, Op::Where, {first, zero, helper(n, Op::Sub, {helper(n, Op::Add, {last, i64(n, 1, "one")}), s})});
  Value* steps = helper(n, Op::Range, {zero, s, i64(n, 1, "one")});
  Value* col = helper(n, Op::Unsqueeze, {past_b, n.const_i64({1}, "col")});  // [B, 1]
  Value* pos = helper(n, Op::Add, {col, steps});                             // [B, S]
  if (n.int_or("do_rotary", 0)) {
    q = rotary(n, q, h.q, h, pos);
    k = rotary(n, k, h.kv, h, pos);
  }
  Value* q4 = to_bnsh(n, q, h.q, h.size);
  Value* pk = to_bnsh(n, k, h.kv, h.size);
  Value* pv = to_bnsh(n, v, h.kv, h.size);
  Value* keys = s;  // without a past, the cache is the new rows
  if (n.input(3)) {
    Value* p = dim(n, n.input(3), 2);
    keys = helper(n, Op::Max, {p, total});
    Value* j = helper(n, Op::Range, {zero, keys, i64(n, 1, "one")});
    Value* rel = helper(n, Op::Sub, {j, col});  // [B, L]
    pk = present(n, n.input(3), pk, rel, s, keys, p);
    pv = present(n, n.input(4), pv, rel, s, keys, p);
  }
  // mask[b, i, j] = j <= pos[b, i] and j <= seqlens_k[b]
  Value* j = helper(n, Op::Range, {zero, keys, i64(n, 1, "one")});
  Value* causal = helper(n, Op::LessOrEqual, {j, helper(n, Op::Unsqueeze, {pos, n.const_i64({2}, "last")})});
  Value* valid = helper(n, Op::LessOrEqual, {j, helper(n, Op::Unsqueeze, {last, n.const_i64({1, 2}, "rows")})});
  Value* mask = helper(n, Op::Unsqueeze, {helper(n, Op::And, {causal, valid}), n.const_i64({1}, "head_axis")});
  AttrMap a;
  if (const double scale = n.float_or("scale", 0.0); scale != 0.0) a.set("scale", scale);
  if (const double cap = n.float_or("softcap", 0.0); cap != 0.0) a.set("softcap", cap);
  Value* y = helper(n, Op::Attention, {q4, pk, pv, mask}, a);  // [B, Nq, S, H]
  AttrMap perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1, 3});
  y = helper(n, Op::Transpose, {y}, perm);
  n.set_output(0, n.emit(Op::Reshape, {y, n.const_i64({0, 0, h.q * h.size}, "bsd")})->output(0));
  if (n.num_outputs() > 1) n.set_output(1, pk);
  if (n.num_outputs() > 2) n.set_output(2, pv);
  return Status::Ok();
}

}  // namespace ferry::repair
