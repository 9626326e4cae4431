// passes/lower_integer_matmuls.cc — ConvInteger / MatMulInteger (what onnxruntime's
// quantize_dynamic writes) as f32 Conv / MatMul, for a target without integer kernels.
//
//   ConvInteger(x, w, zx, zw)    ==>  Cast(Conv(DequantizeLinear(x, 1, zx), W'), i32)
//   MatMulInteger(a, b, za, zb)  ==>  Cast(MatMul(DequantizeLinear(a, 1, za), B'), i32)
//     W' = float(w - zw), B' = float(b - zb)     (constants: computed here, exact)
//
// Every operand of the f32 product is an integer in [-255, 255] and every product an
// integer below 2^16, exact in f32; the sums are exact while below 2^24 and otherwise
// rounded once per addition (relative error ~1e-7, the order oneDNN adds in), where the
// integer op wraps modulo 2^32 only beyond K = 33025 (255^2 K > 2^31).
// The int32 detour the quantizer writes after the op is dropped when the result only
// feeds it: Cast(y, f32) and Cast(y + c, f32) (c i32: the bias, a constant, or quantized
// at run time by the scale of a DynamicQuantizeLinear) read the f32 product directly
// (y + float(c); |c| < 2^24 in every quantizer's bias), so the epilogue fusions see it. The target executes the f32 ops fast (oneDNN); the reference target
// runs the integer ops on their own kernels and keeps them (Target::ops lists them).
// Preconditions (else a near miss, and the op runs on its reference kernel): w / b a
// constant; zw / zb constant (or absent); zx / za absent, a constant of one element, or a
// computed scalar (DynamicQuantizeLinear's zero point): a per-row za is left alone.
#include "ir/op_attrs.h"
#include "ops/quantized_util.h"
#include "passes/match_util.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

Value* lim_cast(Rewriter& rw, Value* v, DType to, const std::vector<const Node*>& from, const std::string& name) {
  AttrMap a;
  a.set("to", std::string(dtype_name(to)));
  return rw.create(Op::Cast, {v}, 1, a, from, name)->output(0);
}

/// A zero point of one element (a scalar, or a constant of one element), or absent.
bool lim_scalar_zero_point(const Value* z) {
  if (!z) return true;
  if (const Tensor* t = constant_of(z)) return t->numel() == 1;
  return z->shape().rank_known() && z->shape().rank() == 0;
}

/// x - zx in f32, as DequantizeLinear(x, 1, zx): exact, one node (the CPU backend runs it
/// in the layout of the convolution that reads it, zx computed or not).
Value* lim_shifted_input(Rewriter& rw, Node& n, Value* x, Value* zx) {
  Tensor one = Tensor::empty(DType::f32, {});
  one.set_double(0, 1.0);
  std::vector<Value*> ins = {x, rw.constant(std::move(one), n.name() + "/unit_scale")};
  if (const Tensor* t = zx ? constant_of(zx) : nullptr; t && t->rank() != 0) {
    Tensor scalar = Tensor::empty(t->dtype(), {});
    scalar.set_double(0, t->get_double(0));
    zx = rw.constant(std::move(scalar), n.name() + "/zero_point");  // per-tensor: rank 0
  }
  if (zx) ins.push_back(zx);
  return rw.create(Op::DequantizeLinear, ins, 1, {}, {&n}, n.name() + "/x_shifted")->output(0);
}

/// The f32 product's value `y` in place of the integer op's output: the quantizer's
/// int32 detour (Cast to f32, or + i32 constant then Cast to f32) reads y directly.
void lim_replace_result(Rewriter& rw, Node& n, Value* y) {
  const Graph& g = rw.graph();
  Value* out = n.output(0);
  Node* next = single_consumer(g, out);
  auto is_cast_to_f32 = [](const Node* c) { return c && c->op() == Op::Cast && c->output(0)->dtype() == DType::f32; };
  if (is_cast_to_f32(next)) {
    rw.replace_uses(next->output(0), y);
    return;
  }
  if (next && next->op() == Op::Add) {
    Value* c = other_operand(*next, out);
    Node* cast = single_consumer(g, next->output(0));
    if (c && c->dtype() == DType::i32 && is_cast_to_f32(cast)) {
      Value* b = nullptr;
      if (const Tensor* t = constant_of(c)) {
        Tensor cf = Tensor::empty(DType::f32, t->dims());
        for (int64_t i = 0; i < t->numel(); ++i) cf.set_double(i, double(t->get_int(i)));
        b = rw.constant(std::move(cf), next->name() + "/f32");
      } else {
        b = lim_cast(rw, c, DType::f32, {next}, next->name() + "/bias_f32");  // quantized at run time
      }
      Node* add = rw.create(Op::Add, {y, b}, 1, {}, {&n, next, cast}, next->name() + "/f32");
      rw.replace_uses(cast->output(0), add->output(0));
      return;
    }
  }
  rw.replace_uses(out, lim_cast(rw, y, DType::i32, {&n}, n.name() + "/i32"));
}

/// The constant operand w - zw as f32 (zw per element of `axis`, or one value), or null.
Value* lim_shifted_weights(Rewriter& rw, Node& n, size_t wi, size_t zi, int64_t axis, const char* what) {
  const Tensor* w = constant_of(n.input(wi));
  const Value* zv = n.num_inputs() > zi ? n.input(zi) : nullptr;
  const Tensor* z = zv ? constant_of(zv) : nullptr;
  if (!w || (zv && !z)) return nullptr;
  Result<Tensor> shifted = shifted_operand(*w, z, axis < 0 ? w->rank() + axis : axis, DType::f32, what);
  if (!shifted.ok()) return nullptr;
  return rw.constant(std::move(shifted).value(), n.name() + "/weights_f32");
}

bool lower_conv_integer_at(Rewriter& rw, Node& n) {
  Value* zx = n.num_inputs() > 2 ? n.input(2) : nullptr;
  if (!lim_scalar_zero_point(zx)) return rw.near_miss("x zero point is not one element", {&n});
  Value* w = lim_shifted_weights(rw, n, 1, 3, 0, "w zero point");
  if (!w) return rw.near_miss("weights or their zero point are not constants", {&n});
  Value* x = lim_shifted_input(rw, n, n.input(0), zx);
  Node* conv = rw.create(Op::Conv, {x, w}, 1, n.attrs(), {&n}, n.name() + "/conv_f32");
  lim_replace_result(rw, n, conv->output(0));
  return true;
}

bool lower_matmul_integer_at(Rewriter& rw, Node& n) {
  Value* za = n.num_inputs() > 2 ? n.input(2) : nullptr;
  if (!lim_scalar_zero_point(za)) return rw.near_miss("a zero point is not one element (per-row)", {&n});
  Value* b = lim_shifted_weights(rw, n, 1, 3, -1, "b zero point");
  if (!b) return rw.near_miss("B or its zero point are not constants", {&n});
  Value* a = lim_shifted_input(rw, n, n.input(0), za);
  Node* mm = rw.create(Op::MatMul, {a, b}, 1, {}, {&n}, n.name() + "/matmul_f32");
  lim_replace_result(rw, n, mm->output(0));
  return true;
}

}  // namespace

Status lower_integer_matmuls_for(Graph& g, PassStats& stats, const Target& target) {
  std::vector<Pattern> patterns;
  if (!target.executes(Op::ConvInteger)) patterns.push_back({"conv_integer_to_f32_conv", Op::ConvInteger, lower_conv_integer_at});
  if (!target.executes(Op::MatMulInteger))
    patterns.push_back({"matmul_integer_to_f32_matmul", Op::MatMulInteger, lower_matmul_integer_at});
  if (patterns.empty()) return Status::Ok();
  return apply_patterns(g, "lower_integer_matmuls", patterns, stats);
}

}  // namespace ferry
