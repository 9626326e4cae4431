// Arithmetic with no one-to-one IR op: NotEqual, FloorDiv, FloorMod, TruncateMod,
// DivNoNan, Log1p, Expm1, ClipByValue, LeftShift / RightShift, Cumsum / Cumprod.
//
// TensorFlow's floor division and modulo round toward negative infinity for
// every dtype; the IR's Div truncates integers and Mod(fmod=0) is the floored
// modulo only for integers, so the float forms are built from fmod.
#include "frontends/tensorflow/import_table.h"

namespace ferry::tf_import {
namespace {

bool is_integer_value(Value* v) { return v->dtype() != DType::undefined && !is_floating(v->dtype()); }

Status need_dtype(TfNode& n, Value* v) {
  if (v->dtype() == DType::undefined) return n.unsupported(n.op() + " of an input whose dtype is unknown at import");
  return Status::Ok();
}

/// where(r != 0 and sign(r) != sign(y), r + y, r): a truncated remainder made floored.
Value* floor_remainder(TfNode& n, Value* r, Value* y) {
  Value* zero = n.scalar_like(0, r, "zero");
  Value* nonzero = n.helper1(Op::Not, {n.helper1(Op::Equal, {r, zero})});
  Value* signs_differ = n.helper1(Op::Xor, {n.helper1(Op::Less, {r, zero}), n.helper1(Op::Less, {y, zero})});
  Value* fix = n.helper1(Op::And, {nonzero, signs_differ});
  return n.emit1(Op::Where, {fix, n.helper1(Op::Add, {r, y}), r});
}

Status cumulative(TfNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(2, 2));
  AttrMap a;
  a.set("exclusive", int64_t(n.bool_or("exclusive", false)));
  a.set("reverse", int64_t(n.bool_or("reverse", false)));
  n.set_output(0, n.emit1(op, {n.input(0), n.input(1)}, a));
  return Status::Ok();
}

Status shift(TfNode& n, const char* direction) {
  FERRY_TRY(n.expect_inputs(2, 2));
  Value* x = n.input(0);
  if (x->dtype() != DType::undefined && (!is_integer(x->dtype()) || is_signed(x->dtype())))
    return n.unsupported(n.op() + " of signed " + dtype_name(x->dtype()) +
                         " (the IR's BitShift is defined on unsigned integers)");
  AttrMap a;
  a.set("direction", std::string(direction));
  n.set_output(0, n.emit1(Op::BitShift, {x, n.input(1)}, a));
  return Status::Ok();
}

}  // namespace

Status import_NotEqual(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  n.set_output(0, n.emit1(Op::Not, {n.helper1(Op::Equal, {n.input(0), n.input(1)})}));
  return Status::Ok();
}

Status import_FloorDiv(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  Value *x = n.input(0), *y = n.input(1);
  FERRY_TRY(need_dtype(n, x));
  if (!is_integer_value(x)) {
    n.set_output(0, n.emit1(Op::Floor, {n.helper1(Op::Div, {x, y})}));
    return Status::Ok();
  }
  // q = trunc(x / y), minus 1 where the remainder is nonzero and its sign differs from y's.
  Value* q = n.helper1(Op::Div, {x, y});
  Value* r = n.helper1(Op::Sub, {x, n.helper1(Op::Mul, {q, y})});
  Value* zero = n.scalar_like(0, x, "zero");
  Value* adjust = n.helper1(Op::And, {n.helper1(Op::Not, {n.helper1(Op::Equal, {r, zero})}),
                                      n.helper1(Op::Xor, {n.helper1(Op::Less, {r, zero}), n.helper1(Op::Less, {y, zero})})});
  AttrMap to;
  to.set("to", std::string(dtype_name(x->dtype())));
  n.set_output(0, n.emit1(Op::Sub, {q, n.helper1(Op::Cast, {adjust}, to)}));
  return Status::Ok();
}

Status import_FloorMod(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  Value *x = n.input(0), *y = n.input(1);
  FERRY_TRY(need_dtype(n, x));
  if (is_integer_value(x)) {
    n.set_output(0, n.emit1(Op::Mod, {x, y}));  // fmod=0: the floored modulo
    return Status::Ok();
  }
  AttrMap a;
  a.set("fmod", int64_t(1));
  n.set_output(0, floor_remainder(n, n.helper1(Op::Mod, {x, y}, a), y));
  return Status::Ok();
}

Status import_TruncateMod(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  AttrMap a;
  a.set("fmod", int64_t(1));  // C's fmod / %: the sign of the dividend
  n.set_output(0, n.emit1(Op::Mod, {n.input(0), n.input(1)}, a));
  return Status::Ok();
}

Status import_DivNoNan(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  Value *x = n.input(0), *y = n.input(1);
  Value* zero = n.scalar_like(0, y, "zero");
  Value* quotient = n.helper1(Op::Div, {x, y});
  // Where broadcasts the zero to the quotient's shape.
  n.set_output(0, n.emit1(Op::Where, {n.helper1(Op::Equal, {y, zero}), n.scalar_like(0, x, "zero_out"), quotient}));
  return Status::Ok();
}

Status import_Log1p(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* x = n.input(0);
  n.set_output(0, n.emit1(Op::Log, {n.helper1(Op::Add, {x, n.scalar_like(1, x, "one")})}));
  return Status::Ok();
}

Status import_Expm1(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* x = n.input(0);
  n.set_output(0, n.emit1(Op::Sub, {n.helper1(Op::Exp, {x}), n.scalar_like(1, x, "one")}));
  return Status::Ok();
}

Status import_ClipByValue(TfNode& n) {
  // The bounds broadcast against x (they need not be scalars): min(max(x, lo), hi).
  FERRY_TRY(n.expect_inputs(3, 3));
  n.set_output(0, n.emit1(Op::Min, {n.helper1(Op::Max, {n.input(0), n.input(1)}), n.input(2)}));
  return Status::Ok();
}

Status import_LeftShift(TfNode& n) { return shift(n, "LEFT"); }
Status import_RightShift(TfNode& n) { return shift(n, "RIGHT"); }
Status import_Cumsum(TfNode& n) { return cumulative(n, Op::CumSum); }
Status import_Cumprod(TfNode& n) { return cumulative(n, Op::CumProd); }

}  // namespace ferry::tf_import
