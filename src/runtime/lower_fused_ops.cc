// runtime/lower_fused_ops.cc — FusedConv / FusedConvTranspose / FusedMatMul back into
// core op + epilogue nodes for the CPU session (see the header for the formulas).
//
// Why not map the fused node straight onto one oneDNN primitive: the session's epilogue
// grouping already decides, per node, what oneDNN may fuse exactly (bias, sum, Relu, Clip,
// LeakyRelu, HardSigmoid, HardSwish) and what must stay a separate step (Sigmoid, Tanh, Gelu:
// oneDNN's fused forms deviate up to 2e-4 on efficientnet_b0), and falls back node by node
// when oneDNN refuses a shape. Lowering keeps one code path for both sources of epilogues.
#include "runtime/lower_fused_ops.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ferry {
namespace {

Op core_op(Op op) {
  switch (op) {
    case Op::FusedConv: return Op::Conv;
    case Op::FusedConvTranspose: return Op::ConvTranspose;
    default: return Op::MatMul;
  }
}

Result<int> lower_one(Graph& g, Node* n) {
  const std::string name = n->name();
  Value* y = n->output(0);
  const DType dt = y->dtype();
  const std::string act = n->attr_string("activation");
  const float alpha = float(n->attr_float("alpha")), beta = float(n->attr_float("beta"));
  const std::vector<std::string> known = {"",        "Relu",      "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid",
                                          "HardSwish", "SiLU", "Gelu", "GeluTanh",  "Tanh"};
  if (std::find(known.begin(), known.end(), act) == known.end())
    return invalid_model("node " + n->describe() + ": unknown activation '" + act + "'");

  // Core op: same attributes minus the epilogue's (and the scheduling hint).
  AttrMap core_attrs = n->attrs();
  for (const char* k : {"activation", "alpha", "beta", "pair"}) core_attrs.erase(k);
  std::vector<Value*> core_in;
  const size_t ncore = n->op() == Op::FusedMatMul ? 2 : 3;
  for (size_t i = 0; i < ncore && i < n->num_inputs(); ++i) core_in.push_back(n->input(i));
  while (!core_in.empty() && !core_in.back()) core_in.pop_back();
  auto fresh = [&](Node* m) {
    m->output(0)->set_type(dt, Shape::unknown_rank());  // shapes: inferred per signature at reshape
    return m->output(0);
  };
  Value* cur = fresh(g.add_node(core_op(n->op()), core_in, 1, core_attrs, name));
  auto add = [&](Value* other, const char* tag) {
    cur = fresh(g.add_node(Op::Add, {cur, other}, 1, {}, g.unique_name(name + "/" + tag)));
  };
  if (n->op() == Op::FusedMatMul && n->has_input(2)) add(n->input(2), "bias");
  if (n->has_input(3)) add(n->input(3), "residual");
  auto unary = [&](Op op, AttrMap attrs = {}) {
    cur = fresh(g.add_node(op, {cur}, 1, std::move(attrs), g.unique_name(name + "/" + op_name(op))));
  };
  if (act == "Relu") unary(Op::Relu);
  if (act == "Sigmoid") unary(Op::Sigmoid);
  if (act == "Tanh") unary(Op::Tanh);
  if (act == "HardSwish") unary(Op::HardSwish);
  if (act == "LeakyRelu") {
    AttrMap a;
    a.set("alpha", double(alpha));
    unary(Op::LeakyRelu, a);
  }
  if (act == "HardSigmoid") {
    AttrMap a;
    a.set("alpha", double(alpha));
    a.set("beta", double(beta));
    unary(Op::HardSigmoid, a);
  }
  if (act == "Gelu" || act == "GeluTanh") {
    AttrMap a;
    a.set("approximate", std::string(act == "Gelu" ? "none" : "tanh"));
    unary(Op::Gelu, a);
  }
  if (act == "Clip") {
    std::vector<Value*> in{cur};
    for (float b : {alpha, beta})
      in.push_back(std::isinf(b) ? nullptr : g.add_constant(g.unique_name(name + "/clip_bound"), Tensor::scalar<float>(b)));
    while (in.back() == nullptr) in.pop_back();
    cur = fresh(g.add_node(Op::Clip, in, 1, {}, g.unique_name(name + "/Clip")));
  }
  if (act == "SiLU") {
    Value* x = cur;
    Value* s = fresh(g.add_node(Op::Sigmoid, {x}, 1, {}, g.unique_name(name + "/Sigmoid")));
    cur = fresh(g.add_node(Op::Mul, {x, s}, 1, {}, g.unique_name(name + "/Mul")));
  }
  const std::string yname = y->name();
  const Shape yshape = y->shape();
  g.replace_all_uses(y, cur);
  g.remove_node(n);
  cur->set_name(yname);
  cur->set_type(dt, yshape);
  return 1;
}

}  // namespace

Result<int> lower_fused_ops(Graph& g) {
  int count = 0;
  for (Node* n : g.nodes()) {
    if (n->op() != Op::FusedConv && n->op() != Op::FusedConvTranspose && n->op() != Op::FusedMatMul) continue;
    if (n->output(0)->dtype() != DType::f32) continue;
    FERRY_ASSIGN_OR_RETURN(int k, lower_one(g, n));
    count += k;
  }
  return count;
}

}  // namespace ferry
