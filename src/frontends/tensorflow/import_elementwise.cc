// Elementwise arithmetic, activations, comparisons, casts and identities.
// TensorFlow's binary ops broadcast like ONNX's (numpy rules), so they map 1:1.
#include "frontends/tensorflow/import_table.h"

namespace ferry::tf_import {
namespace {

Status direct(TfNode& n, Op op, size_t arity) {
  FERRY_TRY(n.expect_inputs(arity, int64_t(arity)));
  n.set_output(0, n.emit1(op, n.inputs()));
  return Status::Ok();
}

}  // namespace

Status import_Add(TfNode& n) { return direct(n, Op::Add, 2); }
Status import_AddV2(TfNode& n) { return direct(n, Op::Add, 2); }
Status import_Sub(TfNode& n) { return direct(n, Op::Sub, 2); }
Status import_Mul(TfNode& n) { return direct(n, Op::Mul, 2); }
Status import_RealDiv(TfNode& n) { return direct(n, Op::Div, 2); }
Status import_Maximum(TfNode& n) { return direct(n, Op::Max, 2); }
Status import_Minimum(TfNode& n) { return direct(n, Op::Min, 2); }
Status import_Pow(TfNode& n) { return direct(n, Op::Pow, 2); }
Status import_Greater(TfNode& n) { return direct(n, Op::Greater, 2); }
Status import_Less(TfNode& n) { return direct(n, Op::Less, 2); }
Status import_Equal(TfNode& n) { return direct(n, Op::Equal, 2); }
Status import_SelectV2(TfNode& n) { return direct(n, Op::Where, 3); }
Status import_Relu(TfNode& n) { return direct(n, Op::Relu, 1); }
Status import_Elu(TfNode& n) { return direct(n, Op::Elu, 1); }
Status import_Selu(TfNode& n) { return direct(n, Op::Selu, 1); }
Status import_Sigmoid(TfNode& n) { return direct(n, Op::Sigmoid, 1); }
Status import_Tanh(TfNode& n) { return direct(n, Op::Tanh, 1); }
Status import_Softplus(TfNode& n) { return direct(n, Op::Softplus, 1); }
Status import_Erf(TfNode& n) { return direct(n, Op::Erf, 1); }
Status import_Exp(TfNode& n) { return direct(n, Op::Exp, 1); }
Status import_Log(TfNode& n) { return direct(n, Op::Log, 1); }
Status import_Sqrt(TfNode& n) { return direct(n, Op::Sqrt, 1); }
Status import_Neg(TfNode& n) { return direct(n, Op::Neg, 1); }
Status import_Abs(TfNode& n) { return direct(n, Op::Abs, 1); }
Status import_Reciprocal(TfNode& n) { return direct(n, Op::Reciprocal, 1); }
Status import_Floor(TfNode& n) { return direct(n, Op::Floor, 1); }

Status import_AddN(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, -1));
  n.set_output(0, n.emit1(Op::Sum, n.inputs()));
  return Status::Ok();
}

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

Status import_Identity(TfNode& n) { return direct(n, Op::Identity, 1); }
Status import_StopGradient(TfNode& n) { return direct(n, Op::Identity, 1); }

Status import_IdentityN(TfNode& n) {
  // Used to attach custom gradients; in inference every output is its input.
  for (size_t i = 0; i < n.num_inputs(); ++i) n.set_output(i, n.input(i));
  return Status::Ok();
}

}  // namespace ferry::tf_import
