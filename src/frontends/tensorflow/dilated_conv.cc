#include "frontends/tensorflow/dilated_conv.h"

#include "frontends/tensorflow/tf_tensor.h"

namespace ferry::tf_import {
namespace {

/// The producer of data input `i` (output 0) among `nodes`, or null.
const tfproto::NodeDef* input_node(const tfproto::NodeDef& n, int i,
                                   const std::map<std::string, const tfproto::NodeDef*>& nodes,
                                   const ResolveRef& resolve) {
  if (i >= n.input_size() || n.input(i).empty() || n.input(i)[0] == '^') return nullptr;
  auto name = resolve(n.input(i));
  if (!name) return nullptr;
  auto it = nodes.find(*name);
  return it == nodes.end() ? nullptr : it->second;
}

/// The integer values of Const input `i`, or nullopt.
std::optional<std::vector<int64_t>> const_ints(const tfproto::NodeDef& n, int i,
                                               const std::map<std::string, const tfproto::NodeDef*>& nodes,
                                               const ResolveRef& resolve) {
  const tfproto::NodeDef* c = input_node(n, i, nodes, resolve);
  if (!c || c->op() != "Const") return std::nullopt;
  auto v = c->attr().find("value");
  if (v == c->attr().end() || !v->second.has_tensor()) return std::nullopt;
  auto t = tensor_from_tf(v->second.tensor());
  if (!t.ok() || !is_integer(t->dtype())) return std::nullopt;
  return t->to_int_vector();
}

std::string attr_s(const tfproto::NodeDef& n, const std::string& name, const std::string& def) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? def : it->second.s();
}

/// Attribute `name` is absent or a list of 1s (strides, dilations).
bool all_ones(const tfproto::NodeDef& n, const std::string& name) {
  auto it = n.attr().find(name);
  if (it == n.attr().end()) return true;
  for (int64_t v : it->second.list().i())
    if (v != 1) return false;
  return true;
}

}  // namespace

std::optional<tfproto::NodeDef> dilated_conv_for(const tfproto::NodeDef& b2s,
                                                 const std::map<std::string, const tfproto::NodeDef*>& nodes,
                                                 const ResolveRef& resolve) {
  if (b2s.op() != "BatchToSpaceND") return std::nullopt;
  const tfproto::NodeDef* conv = input_node(b2s, 0, nodes, resolve);
  if (!conv || (conv->op() != "Conv2D" && conv->op() != "DepthwiseConv2dNative")) return std::nullopt;
  if (attr_s(*conv, "padding", "") != "VALID" || attr_s(*conv, "data_format", "NHWC") != "NHWC" ||
      !all_ones(*conv, "strides") || !all_ones(*conv, "dilations") || conv->input_size() < 2)
    return std::nullopt;
  const tfproto::NodeDef* s2b = input_node(*conv, 0, nodes, resolve);
  if (!s2b || s2b->op() != "SpaceToBatchND" || s2b->input_size() < 3 || b2s.input_size() < 3) return std::nullopt;
  auto block = const_ints(*s2b, 1, nodes, resolve), block2 = const_ints(b2s, 1, nodes, resolve);
  auto pads = const_ints(*s2b, 2, nodes, resolve), crops = const_ints(b2s, 2, nodes, resolve);
  if (!block || !block2 || !pads || !crops || *block != *block2 || block->size() != 2 || pads->size() != 4 ||
      crops->size() != 4)
    return std::nullopt;
  std::vector<int64_t> p(4);  // top, bottom, left, right
  for (size_t k = 0; k < 4; ++k) {
    p[k] = (*pads)[k] - (*crops)[k];
    if (p[k] < 0) return std::nullopt;
  }
  for (int64_t d : *block)
    if (d < 1) return std::nullopt;

  tfproto::NodeDef out;
  out.set_name(b2s.name());
  out.set_op(conv->op());
  out.set_device(conv->device());
  out.add_input(s2b->input(0));
  out.add_input(conv->input(1));
  *out.mutable_attr() = conv->attr();
  auto& attrs = *out.mutable_attr();
  attrs["padding"].set_s("EXPLICIT");
  auto* e = attrs["explicit_paddings"].mutable_list();
  e->clear_i();
  for (int64_t v : {int64_t(0), int64_t(0), p[0], p[1], p[2], p[3], int64_t(0), int64_t(0)}) e->add_i(v);
  auto* dil = attrs["dilations"].mutable_list();
  dil->clear_i();
  for (int64_t v : {int64_t(1), (*block)[0], (*block)[1], int64_t(1)}) dil->add_i(v);
  return out;
}

}  // namespace ferry::tf_import
