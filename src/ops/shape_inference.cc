#include "ops/shape_inference.h"

#include "ops/registry.h"

namespace ferry {

Status infer_shapes(Graph& g, const Node** failed, RefineShapeFn refine) {
  FERRY_ASSIGN_OR_RETURN(auto order, g.topo_order());
  for (Node* n : order) {
    std::vector<InputInfo> ins(n->num_inputs());
    for (size_t i = 0; i < n->num_inputs(); ++i)
      if (Value* v = n->input(i)) {
        if (v->dtype() == DType::undefined)
          return invalid_model("node " + n->describe() + ": input " + std::to_string(i) + " ('" + v->name() +
                               "') has no type");
        ins[i] = {v->dtype(), v->shape(), v->constant()};
      }
    std::vector<OutputInfo> outs;
    if (Status st = infer_node(*n, std::move(ins), &outs); !st.ok()) {
      if (failed) *failed = n;
      return st;
    }
    for (size_t i = 0; i < n->num_outputs(); ++i)
      n->output(i)->set_type(outs[i].dtype, refine ? refine(*n, outs[i].shape) : outs[i].shape);
  }
  return Status::Ok();
}

}  // namespace ferry
