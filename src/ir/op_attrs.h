// ir/op_attrs.h — one typed attribute struct per op, generated from the ATTR / REQ /
// OPT entries of its ir/ops.def row:
//
//   ATTR(group, int, 1)          int64_t group = 1;
//   REQ(num_groups, int)         int64_t num_groups{};   (the verifier guarantees it is set)
//   OPT(dilations, ints)         std::optional<std::vector<int64_t>> dilations;
//
// Read them through the node, which parses its AttrMap once and keeps the result
// until the attributes change:
//
//   const ConvAttrs& a = conv.attrs<ConvAttrs>();
//   if (a.group != 1) return false;   // a misspelled field does not compile
//
// The reference is valid while the node's attributes are unchanged; asking for
// another op's struct is a FERRY_CHECK failure.
#pragma once

#include <optional>

#include "ir/attr_kinds.h"
#include "ir/op.h"

namespace ferry {

#define ATTR(name, kind, def) FERRY_ATTR_TYPE_##kind name = FERRY_ATTR_DEFAULT_##kind(def);
#define REQ(name, kind) FERRY_ATTR_TYPE_##kind name{};
#define OPT(name, kind) std::optional<FERRY_ATTR_TYPE_##kind> name;
#define FERRY_OP(Name, min_in, max_in, min_out, max_out, sink, export_to, flops, ...) \
  struct Name##Attrs {                                                               \
    static constexpr Op kOp = Op::Name;                                              \
    __VA_ARGS__                                                                      \
    /** Reads the attributes present in `m`; the others keep their defaults. */      \
    static Name##Attrs parse(const AttrMap& m);                                      \
  };
#include "ir/ops.def"
#undef FERRY_OP
#undef ATTR
#undef REQ
#undef OPT

// Ops that declare the same attributes read as one struct (Node::attrs checks).
using ReduceAttrs = ReduceSumAttrs;     ///< every Reduce* op
using ArgReduceAttrs = ArgMaxAttrs;     ///< ArgMax, ArgMin
using CumulativeAttrs = CumSumAttrs;    ///< CumSum, CumProd
// SoftmaxAttrs also reads LogSoftmax and Hardmax nodes.

class Node;

/// The epilogue attributes FusedConv, FusedConvTranspose, FusedMatMul and FusedMul share.
struct EpilogueAttrs {
  const std::string& activation;
  double alpha, beta;
};
/// The epilogue of a fused node (another op is a FERRY_CHECK failure).
EpilogueAttrs epilogue_attrs(const Node& n);

}  // namespace ferry
