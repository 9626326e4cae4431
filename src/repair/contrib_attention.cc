// Repair of ONNX Runtime's packed-QKV Attention (com.microsoft), as its
// transformer optimizer writes it for BERT (mask_index from EmbedLayerNormalization)
// and GPT-2 (unidirectional):
//   q, k, v = split(X @ W + bias, 3, last axis)             [B, S, H] each
//   Y = Attention(q, k, v, mask; q_num_heads = kv_num_heads = num_heads, scale, is_causal = unidirectional)
// mask (added to the scores, masked keys get mask_filter_value, default -10000):
//   mask_index [B]      valid lengths: key j of batch b is masked when j >= mask_index[b]
//   mask_index [B, T]   raw mask: key j masked where mask[b, j] == 0
//   attention_bias      added as given ([B or 1, num_heads or 1, S, T])
// Refused: past / present (a KV cache), past_sequence_length, do_rotary,
// unequal qkv_hidden_sizes, mask_index of rank 3 or 4 or of shape [2B] (start and end positions).
//
// MultiHeadAttention (separate query [B, S, D], key [B, L, D], value [B, L, Dv]):
//   Y = Attention(query + bq, key + bk, value + bv, mask; num_heads, scale, is_causal = unidirectional)
//   bias = [bq, bk, bv]; key_padding_mask [B] or [B, L] as mask_index above; attention_bias added.
// Refused: packed QKV or KV (5-D query, absent key/value), BNSH key/value (a cross-attention
// cache), past / present, other outputs read.
#include "repair/contrib_rules.h"
#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

using onnx_import::OnnxNode;

/// "" when input `mi` (a mask: [B] valid lengths or [B, T] 0/1) is a form additive_mask handles.
std::string why_not_mask(const OnnxNode& n, size_t mi, const char* what) {
  const Value* m = n.input(mi);
  if (!m || m->dtype() == DType::undefined) return "";
  if (m->dtype() != DType::i32 && m->dtype() != DType::i64) return std::string(what) + " is not int32";
  if (!m->shape().rank_known()) return std::string(what) + " has unknown rank";
  const Value* x = n.input(0);
  if (m->shape().rank() == 1) {
    if (x->shape().rank_known() && x->shape().rank() >= 1 && m->shape()[0] == x->shape()[0]) return "";
    return std::string(what) + " of shape " + m->shape().to_string() +
           " is not the batch of the input (the [2B] form with start positions is not handled)";
  }
  if (m->shape().rank() == 2) return "";
  return std::string(what) + " of rank " + std::to_string(m->shape().rank()) + " is not handled (only [B] and [B, T])";
}

/// The additive mask [B, 1, 1, T] from the mask at input `mi`; T is dim 1 of input `keys_from`.
Value* additive_mask(OnnxNode& n, size_t mi, size_t keys_from, float filter) {
  Value* m = n.input(mi);
  Value* zero = f32_scalar(n, 0.0f, "zero");
  Value* fill = f32_scalar(n, filter, "mask_filter_value");
  Value* add;
  if (m->shape().rank() == 1) {
    Value* t = helper(n, Op::Gather, {n.shape_of(n.input(keys_from)), n.constant(Tensor::scalar<int64_t>(1), "seq_dim")});
    Value* keys = helper(n, Op::Range, {n.constant(Tensor::scalar<int64_t>(0), "start"), t,
                                        n.constant(Tensor::scalar<int64_t>(1), "delta")});
    Value* len = helper(n, Op::Unsqueeze, {cast(n, m, "i64"), n.const_i64({1}, "len_axes")});
    add = helper(n, Op::Where, {helper(n, Op::Less, {keys, len}), zero, fill});
  } else {
    Value* masked = helper(n, Op::Equal, {cast(n, m, "i64"), n.constant(Tensor::scalar<int64_t>(0), "masked")});
    add = helper(n, Op::Where, {masked, fill, zero});
  }
  return helper(n, Op::Unsqueeze, {add, n.const_i64({1, 2}, "mask_axes")});
}

// The fused Attention both contrib attentions become: q, k, v in `ins`, the additive mask made from
// input `mi` (keys from its dim `keys_from`) plus attention_bias (input 5), ORT's heads, causality and scale.
Status emit_attention(OnnxNode& n, std::vector<Value*> ins, size_t mi, size_t keys_from) {
  const int64_t heads = n.int_or("num_heads", 1);
  const float filter = float(n.float_or("mask_filter_value", -10000.0));
  Value* mask = n.input(mi) ? additive_mask(n, mi, keys_from, filter) : nullptr;
  if (n.input(5)) mask = mask ? helper(n, Op::Add, {mask, n.input(5)}) : n.input(5);
  if (mask) ins.push_back(mask);
  AttrMap a;
  a.set("q_num_heads", heads);
  a.set("kv_num_heads", heads);
  a.set("is_causal", n.int_or("unidirectional", 0));
  // ORT's scale 0 (its default) means 1/sqrt(head size), as Attention's own default.
  if (const double scale = n.float_or("scale", 0.0); scale != 0.0) a.set("scale", scale);
  n.set_output(0, n.emit(Op::Attention, ins, a)->output(0));
  return Status::Ok();
}

}  // namespace

std::string why_not_Attention(const OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, {"num_heads", "unidirectional", "qkv_hidden_sizes",
                                                  "mask_filter_value", "scale", "do_rotary"}),
                            not_f32(n, {0, 1, 2, 5}), output_unused(n, 1)});
  if (!r.empty()) return r;
  if (!n.input(0) || !n.input(1)) return "input or weights is missing";
  if (n.input(4)) return "past (a KV cache) is not handled";
  if (n.input(6)) return "past_sequence_length is not handled";
  if (attr_int(n, "do_rotary").value_or(0) != 0) return "do_rotary = 1 is not handled";
  if (!attr_int(n, "num_heads")) return "num_heads is missing";
  if (auto sizes = attr_ints(n, "qkv_hidden_sizes"))
    if (sizes->size() != 3 || (*sizes)[0] != (*sizes)[1] || (*sizes)[1] != (*sizes)[2])
      return "unequal qkv_hidden_sizes are not handled";
  if (int64_t r0 = input_rank(n, 0); r0 >= 0 && r0 != 3) return "input of rank " + std::to_string(r0) + " (only 3)";
  return why_not_mask(n, 3, "mask_index");
}

Status repair_Attention(OnnxNode& n) {
  n.ignore("qkv_hidden_sizes");
  n.ignore("do_rotary");
  Value* qkv = helper(n, Op::MatMul, {n.input(0), n.input(1)});
  if (n.input(2)) qkv = helper(n, Op::Add, {qkv, n.input(2)});
  AttrMap split;
  split.set("axis", int64_t(-1));
  split.set("num_outputs", int64_t(3));
  Node* parts = n.emit_helper(Op::Split, {qkv}, split, 3);
  std::vector<Value*> ins = {parts->output(0), parts->output(1), parts->output(2)};
  return emit_attention(n, std::move(ins), 3, 0);
}

std::string why_not_MultiHeadAttention(const OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, {"num_heads", "unidirectional", "mask_filter_value", "scale"}),
                            input_count(n, 3, 6), not_f32(n, {0, 1, 2, 3, 5}), output_unused(n, 1),
                            output_unused(n, 2), output_unused(n, 3)});
  if (!r.empty()) return r;
  if (!attr_int(n, "num_heads")) return "num_heads is missing";
  for (size_t i : {0, 1, 2})
    if (int64_t rank = input_rank(n, i); rank >= 0 && rank != 3)
      return "input " + std::to_string(i) + " of rank " + std::to_string(rank) +
             " (only separate [B, S, D] query, key and value; packed or BNSH forms are not handled)";
  if (n.input(3))
    for (size_t i : {0, 1, 2})
      if (const Value* v = n.input(i); v->dtype() != DType::undefined && (!v->shape().rank_known() || !v->shape()[2].is_static()))
        return "a bias with input " + std::to_string(i) + " of unknown hidden size is not handled";
  return why_not_mask(n, 4, "key_padding_mask");
}

Status repair_MultiHeadAttention(OnnxNode& n) {
  std::vector<Value*> ins = {n.input(0), n.input(1), n.input(2)};
  if (n.input(3)) {  // bias = [q bias, k bias, v bias]
    std::vector<int64_t> sizes;
    for (size_t i : {0, 1, 2}) sizes.push_back(n.input(i)->shape()[2].value());
    AttrMap split;
    split.set("axis", int64_t(0));
    Node* parts = n.emit_helper(Op::Split, {n.input(3), n.const_i64(sizes, "bias_sizes")}, split, 3);
    for (size_t i : {0, 1, 2}) ins[i] = helper(n, Op::Add, {ins[i], parts->output(i)});
  }
  return emit_attention(n, std::move(ins), 4, 1);
}

}  // namespace ferry::repair

// --- RotaryEmbedding ----------------------------------------------------------
// ONNX Runtime's RotaryEmbedding(input, position_ids, cos_cache, sin_cache) is ONNX's
// RotaryEmbedding-23(X, cos_cache, sin_cache, position_ids) with the inputs in another
// order (measured equal on 3-D and 4-D inputs, interleaved or not, partial rotary dims),
// plus one form of its own: position_ids of shape [1] is the first position of every
// sequence (positions offset .. offset + S - 1), expanded here to [B, S].

namespace ferry::repair {

std::string why_not_RotaryEmbedding(const onnx_import::OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, {"interleaved", "is_packed_batching", "num_heads",
                                                  "rotary_embedding_dim", "scale"}),
                            input_count(n, 4, 4), not_f32(n, {0, 2, 3})});
  if (!r.empty()) return r;
  if (attr_int(n, "is_packed_batching").value_or(0) != 0) return "is_packed_batching = 1 (packed sequences) is not handled";
  if (attr_float(n, "scale").value_or(1.0) != 1.0) return "scale other than 1 is not handled";
  const int64_t xr = input_rank(n, 0), pr = input_rank(n, 1);
  if (xr != 3 && xr != 4) return "input of known rank 3 or 4 is required";
  if (pr != 1 && pr != 2) return "position_ids of known rank 1 ([1]: an offset) or 2 ([B, S]) is required";
  if (pr == 1 && n.input(1)->shape()[0].is_static() && n.input(1)->shape()[0].value() != 1)
    return "position_ids of rank 1 must have one element (the offset)";
  return "";
}

Status repair_RotaryEmbedding(onnx_import::OnnxNode& n) {
  AttrMap a;
  for (const char* attr : {"interleaved", "num_heads", "rotary_embedding_dim"}) n.copy(a, attr, Op::RotaryEmbedding);
  n.ignore("is_packed_batching");
  n.ignore("scale");
  Value* x = n.input(0);
  Value* pos = n.input(1);
  if (input_rank(n, 1) == 1) {  // an offset: positions offset .. offset + S - 1 for every batch row
    Value* shape = n.shape_of(x);
    Value* seq = helper(n, Op::Gather, {shape, n.const_i64({x->shape().rank() == 3 ? 1 : 2}, "seq_axis")});
    Value* batch = helper(n, Op::Gather, {shape, n.const_i64({0}, "batch_axis")});
    Value* start = helper(n, Op::Squeeze, {pos});
    Value* limit = helper(n, Op::Add, {start, helper(n, Op::Squeeze, {seq})});
    Value* range = helper(n, Op::Range, {start, limit, n.constant(Tensor::scalar<int64_t>(1), "one")});
    Value* row = helper(n, Op::Unsqueeze, {range, n.const_i64({0}, "axis0")});
    AttrMap cat;
    cat.set("axis", int64_t(0));
    pos = helper(n, Op::Expand, {row, helper(n, Op::Concat, {batch, seq}, cat)});
  }
  n.set_output(0, n.emit(Op::RotaryEmbedding, {x, n.input(2), n.input(3), pos}, a)->output(0));
  return Status::Ok();
}

}  // namespace ferry::repair
