// QuantizeLinear / DequantizeLinear (opsets 10-25; integer types): axis since 13,
// block_size and output_dtype (an ONNX type code, a ferry dtype name in the IR) since 21.
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {
namespace {

Status import_quantize(OnnxNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(2, 3));
  AttrMap a;
  n.copy(a, "axis", op, {.since = 13});
  n.copy(a, "block_size", op, {.since = 21});
  n.ignore("saturate", {.since = 19});  // float8 outputs only
  if (op == Op::QuantizeLinear && n.int_or("precision", 0, {.since = 25}) != 0)
    return n.unsupported("QuantizeLinear precision attribute is not supported");
  FERRY_ASSIGN_OR_RETURN(auto out, dtype_attr(n, "output_dtype", {.since = 21}));
  if (out) a.set("output_dtype", *out);
  n.set_outputs(n.emit(op, n.inputs(), a));
  return Status::Ok();
}

}  // namespace

Status import_QuantizeLinear(OnnxNode& n) { return import_quantize(n, Op::QuantizeLinear); }
Status import_DequantizeLinear(OnnxNode& n) { return import_quantize(n, Op::DequantizeLinear); }

}  // namespace ferry::onnx_import
