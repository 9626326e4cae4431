// Elementwise ops that need translating (TensorFlow's binary ops broadcast like
// ONNX's, numpy rules, so most elementwise ops are DIRECT rows): Relu6, LeakyRelu,
// Swish, Erfc, Rsqrt, Square, SquaredDifference, Cast, IdentityN.
#include "frontends/tensorflow/import_table.h"

namespace ferry::tf_import {

Status import_SquaredDifference(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  Value* d = n.helper1(Op::Sub, {n.input(0), n.input(1)});
  n.set_output(0, n.emit1(Op::Mul, {d, d}));  // (a - b)^2
  return Status::Ok();
}

Status import_Relu6(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* x = n.input(0);
  n.set_output(0, n.emit1(Op::Clip, {x, n.scalar_like(0, x, "min"), n.scalar_like(6, x, "max")}));
  return Status::Ok();
}

Status import_LeakyRelu(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  a.set("alpha", n.float_or("alpha", 0.2));
  n.set_output(0, n.emit1(Op::LeakyRelu, {n.input(0)}, a));
  return Status::Ok();
}

Status import_Swish(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* x = n.input(0);
  n.set_output(0, n.emit1(Op::Mul, {x, n.helper1(Op::Sigmoid, {x})}));  // x * sigmoid(x)
  return Status::Ok();
}

Status import_Erfc(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* x = n.input(0);
  n.set_output(0, n.emit1(Op::Sub, {n.scalar_like(1, x, "one"), n.helper1(Op::Erf, {x})}));  // 1 - erf(x)
  return Status::Ok();
}

Status import_Rsqrt(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  n.set_output(0, n.emit1(Op::Reciprocal, {n.helper1(Op::Sqrt, {n.input(0)})}));
  return Status::Ok();
}

Status import_Square(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  n.set_output(0, n.emit1(Op::Mul, {n.input(0), n.input(0)}));
  return Status::Ok();
}

Status import_Cast(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  FERRY_ASSIGN_OR_RETURN(DType to, n.type_attr("DstT"));
  if (n.attr("SrcT")) {
    FERRY_ASSIGN_OR_RETURN(DType from, n.type_attr("SrcT"));
    if (n.input(0)->dtype() != DType::undefined && from != n.input(0)->dtype())
      return invalid_model(std::string("attribute SrcT = ") + dtype_name(from) + " but input 0 is " +
                           n.input(0)->type_string());
  }
  AttrMap a;
  a.set("to", std::string(dtype_name(to)));
  n.set_output(0, n.emit1(Op::Cast, {n.input(0)}, a));
  return Status::Ok();
}

Status import_IdentityN(TfNode& n) {
  // Used to attach custom gradients; in inference every output is its input.
  for (size_t i = 0; i < n.num_inputs(); ++i) n.set_output(i, n.input(i));
  return Status::Ok();
}

}  // namespace ferry::tf_import
