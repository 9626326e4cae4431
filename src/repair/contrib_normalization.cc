// Repairs of ONNX Runtime's normalization ops:
//   SkipLayerNormalization(x, skip, gamma [, beta [, bias]])      s = x + skip (+ bias)
//       output = LayerNorm(s; gamma, beta, eps) over the last axis; output 3 = s
//   SkipSimplifiedLayerNormalization(x, skip, gamma [, bias])     output = RMSNorm(s; gamma, eps); output 3 = s
//   EmbedLayerNormalization(ids, seg_ids?, word, pos, seg?, gamma, beta, mask?, pos_ids?)
//       s = word[ids] + pos[pos_ids or 0..S-1] (+ seg[seg_ids]); output = LayerNorm(s); output 2 = s;
//       output 1 (mask_index, int32 [B]) = sum of mask over the sequence, zeros without a mask
//   LayerNormalization, SimplifiedLayerNormalization in the default domain before opset 17 / 23:
//       ORT's own kernels (its optimizer writes them at any opset); same semantics as ONNX
//       LayerNormalization-17 and RMSNormalization-23 with one output.
#include "frontends/onnx/import_table.h"
#include "repair/contrib_rules.h"
#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

using onnx_import::OnnxNode;

AttrMap norm_attrs(OnnxNode& n, double default_eps) {
  AttrMap a;
  a.set("axis", int64_t(-1));
  a.set("epsilon", n.float_or("epsilon", default_eps));
  return a;
}

/// x + skip (+ bias): the sum both Skip* ops normalize and return as output 3.
Value* skip_sum(OnnxNode& n, size_t bias_input) {
  Value* s = helper(n, Op::Add, {n.input(0), n.input(1)});
  return n.input(bias_input) ? helper(n, Op::Add, {s, n.input(bias_input)}) : s;
}

std::string skip_outputs(const OnnxNode& n) { return first_of({output_unused(n, 1), output_unused(n, 2)}); }

}  // namespace

std::string why_not_SkipLayerNormalization(const OnnxNode& n) {
  return first_of({unknown_attribute(n, {"epsilon"}), input_count(n, 3, 5), not_f32(n, {0, 1, 2, 3, 4}),
                   skip_outputs(n)});
}
Status repair_SkipLayerNormalization(OnnxNode& n) {
  Value* s = skip_sum(n, 4);
  std::vector<Value*> ins = {s, n.input(2)};
  if (n.input(3)) ins.push_back(n.input(3));
  n.set_output(0, n.emit(Op::LayerNormalization, ins, norm_attrs(n, 1e-12))->output(0));
  n.set_output(3, s);
  return Status::Ok();
}

std::string why_not_SkipSimplifiedLayerNormalization(const OnnxNode& n) {
  return first_of({unknown_attribute(n, {"epsilon"}), input_count(n, 3, 4), not_f32(n, {0, 1, 2, 3}),
                   skip_outputs(n)});
}
Status repair_SkipSimplifiedLayerNormalization(OnnxNode& n) {
  Value* s = skip_sum(n, 3);
  n.set_output(0, n.emit(Op::RMSNormalization, {s, n.input(2)}, norm_attrs(n, 1e-12))->output(0));
  n.set_output(3, s);
  return Status::Ok();
}

std::string why_not_EmbedLayerNormalization(const OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, {"epsilon", "mask_index_type"}), not_f32(n, {2, 3, 4, 5, 6})});
  if (!r.empty()) return r;
  for (size_t i : {0, 2, 3, 5, 6})
    if (!n.input(i)) return "input " + std::to_string(i) + " is missing";
  if (bool(n.input(1)) != bool(n.input(4))) return "segment_ids and segment_embedding must be given together";
  if (attr_int(n, "mask_index_type").value_or(1) != 1 && n.output_used(1))
    return "mask_index_type " + std::to_string(*attr_int(n, "mask_index_type")) + " is not handled (only 1)";
  for (size_t i : {0, 1, 7, 8})
    if (const Value* v = n.input(i); v && v->dtype() != DType::undefined && v->dtype() != DType::i32 &&
                                     v->dtype() != DType::i64)
      return "input " + std::to_string(i) + " is not int32 or int64";
  return "";
}
Status repair_EmbedLayerNormalization(OnnxNode& n) {
  Value* s = helper(n, Op::Gather, {n.input(2), n.input(0)});
  Value* positions = n.input(8);
  if (!positions) {
    // 0..S-1 from the ids' shape: [S, H] rows broadcast over the batch.
    Value* len = helper(n, Op::Gather, {n.shape_of(n.input(0)), n.constant(Tensor::scalar<int64_t>(1), "one")});
    positions = helper(n, Op::Range, {n.constant(Tensor::scalar<int64_t>(0), "start"), len,
                                      n.constant(Tensor::scalar<int64_t>(1), "delta")});
  }
  s = helper(n, Op::Add, {s, helper(n, Op::Gather, {n.input(3), positions})});
  if (n.input(1)) s = helper(n, Op::Add, {s, helper(n, Op::Gather, {n.input(4), n.input(1)})});
  n.ignore("mask_index_type");
  n.set_output(0, n.emit(Op::LayerNormalization, {s, n.input(5), n.input(6)}, norm_attrs(n, 1e-12))->output(0));
  if (n.output_used(1)) {
    // Valid tokens per row; without a mask, the ids times 0 summed: zeros [B].
    Value* m = n.input(7) ? cast(n, n.input(7), "i64")
                          : helper(n, Op::Mul, {cast(n, n.input(0), "i64"), n.constant(Tensor::scalar<int64_t>(0), "zero")});
    AttrMap keep;
    keep.set("keepdims", int64_t(0));
    Value* count = helper(n, Op::ReduceSum, {m, n.const_i64({1}, "seq_axis")}, keep);
    n.set_output(1, cast(n, count, "i32"));
  }
  n.set_output(2, s);
  return Status::Ok();
}

std::string why_not_LayerNormalization(const OnnxNode& n) {
  return first_of({unknown_attribute(n, {"axis", "epsilon", "stash_type"}), input_count(n, 2, 3),
                   not_f32(n, {0, 1, 2})});
}
Status repair_LayerNormalization(OnnxNode& n) { return onnx_import::import_direct(n, Op::LayerNormalization); }

std::string why_not_SimplifiedLayerNormalization(const OnnxNode& n) {
  return first_of({unknown_attribute(n, {"axis", "epsilon", "stash_type"}), input_count(n, 2, 2),
                   not_f32(n, {0, 1}), output_unused(n, 1)});
}
Status repair_SimplifiedLayerNormalization(OnnxNode& n) {
  AttrMap a;
  n.copy_schema_attrs(a, Op::RMSNormalization);
  n.set_output(0, n.emit(Op::RMSNormalization, {n.input(0), n.input(1)}, a)->output(0));
  return Status::Ok();
}

}  // namespace ferry::repair
