// Nodes of domain "ferry": ferry's own ops (fused ops) written by `ferry convert`
// (export/onnx_exporter.h). The ONNX node is the IR node: same op name, same
// inputs and attributes (typed by the op's ops.def schema), same outputs.
#include "frontends/onnx/import_ferry_domain.h"

namespace ferry::onnx_import {

Status import_ferry_domain(OnnxNode& n) {
  if (n.opset() != 1)
    return n.unsupported("opset " + std::to_string(n.opset()) + " of domain 'ferry' is not supported (only 1)",
                         "write the model again with this version of `ferry convert`");
  auto op = op_from_name(n.op_type());
  if (!op)
    return n.unsupported("ferry has no op named '" + n.op_type() + "' (written by another ferry version?)",
                         "write the model again with this version of `ferry convert`");
  return import_direct(n, *op);
}

}  // namespace ferry::onnx_import
