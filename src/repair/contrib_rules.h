// repair/contrib_rules.h — the rules of the repair table (repair_table.cc), one
// why_not_<Op> / repair_<Op> pair per row, defined in the file of their family:
// contrib_activation.cc, contrib_normalization.cc, contrib_conv_matmul.cc,
// contrib_attention.cc, contrib_group_query_attention.cc, contrib_quantized.cc, contrib_quantized_lstm.cc; deform_conv.cc (ONNX DeformConv).
#pragma once

#include <string>

#include "frontends/onnx/onnx_node.h"

namespace ferry::repair {

#define FERRY_REPAIR(domain, op_type, becomes)                   \
  std::string why_not_##op_type(const onnx_import::OnnxNode& n); \
  Status repair_##op_type(onnx_import::OnnxNode& n);
#include "repair/repair_table.def"
#undef FERRY_REPAIR

}  // namespace ferry::repair
