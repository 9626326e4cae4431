// ops/op_context.h — what an op's shape inference and reference kernel see.
//
// Every op in ir/ops.def has two functions, defined in src/ops/<family>.cc:
//
//   Status infer_<Op>(InferContext& ctx);   // output dtypes and shapes
//   Status ref_<Op>(KernelContext& ctx);    // the reference kernel (the oracle)
//
// infer_ runs in two settings: on the graph (shapes may be symbolic or of
// unknown rank; input_value() is non-null only for constants) and in the
// interpreter (all shapes static, every input_value() known). It must give the
// most precise answer it can and never fail just because something is unknown:
// unknown in, unknown out. It fails only when the inputs contradict the op.
//
// ref_ sees concrete tensors. Before it runs, the interpreter calls infer_ on
// the concrete inputs and preallocates every output whose shape came out static
// (ctx.output(i)). A kernel whose output shape depends on data (NonZero) calls
// ctx.allocate_output(). Afterwards the interpreter checks each output against
// the inferred dtype and shape.
#pragma once

#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"
#include "ir/op_attrs.h"

namespace ferry {

/// What is known about one input of a node.
struct InputInfo {
  DType dtype = DType::undefined;
  Shape shape;                    ///< may be unknown rank in graph inference
  const Tensor* value = nullptr;  ///< known data (constants; always in the interpreter)
};

struct OutputInfo {
  DType dtype = DType::undefined;
  Shape shape;
};

/// Shared by both contexts: the node, its attributes, errors with node context.
class NodeContext {
 public:
  explicit NodeContext(const Node& node) : node_(node) {}
  const Node& node() const { return node_; }
  /// The node's typed attributes (ir/op_attrs.h): ctx.attrs<SoftmaxAttrs>().axis. Shape
  /// functions and kernels read attributes only this way (there are no getters by
  /// name here), so a misspelled attribute does not compile; a subgraph is
  /// ctx.node().attr_graph("body").
  template <class T>
  const T& attrs() const {
    return node_.attrs<T>();
  }
  /// An invalid-model error; the caller adds "node 'x' (Op)" context.
  Status error(std::string msg) const { return invalid_model(std::move(msg)); }
  Status unsupported_here(std::string msg) const { return unsupported(std::move(msg)); }

 private:
  const Node& node_;
};

class InferContext : public NodeContext {
 public:
  InferContext(const Node& node, std::vector<InputInfo> inputs)
      : NodeContext(node), inputs_(std::move(inputs)), outputs_(node.num_outputs()) {}

  size_t num_inputs() const { return inputs_.size(); }
  /// False for an omitted optional input (or an index past the end).
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i].dtype != DType::undefined; }
  const InputInfo& input(size_t i) const { return inputs_[i]; }
  DType input_dtype(size_t i) const { return inputs_[i].dtype; }
  const Shape& input_shape(size_t i) const { return inputs_[i].shape; }
  /// Known data of input i, or null.
  const Tensor* input_value(size_t i) const { return has_input(i) ? inputs_[i].value : nullptr; }

  size_t num_outputs() const { return outputs_.size(); }
  void set_output(size_t i, DType dtype, Shape shape) { outputs_[i] = {dtype, std::move(shape)}; }
  const std::vector<OutputInfo>& outputs() const { return outputs_; }

 private:
  std::vector<InputInfo> inputs_;
  std::vector<OutputInfo> outputs_;
};

class KernelContext : public NodeContext {
 public:
  KernelContext(const Node& node, std::vector<const Tensor*> inputs, std::vector<Tensor>* outputs)
      : NodeContext(node), inputs_(std::move(inputs)), outputs_(outputs) {}

  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const Tensor& input(size_t i) const { return *inputs_[i]; }

  size_t num_outputs() const { return outputs_->size(); }
  /// Preallocated output (undefined when its shape was not static before the run).
  Tensor& output(size_t i) { return (*outputs_)[i]; }
  /// Allocates (or replaces) output i; fails on absurd sizes.
  Result<Tensor*> allocate_output(size_t i, DType dtype, std::vector<int64_t> dims) {
    FERRY_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, std::move(dims)));
    (*outputs_)[i] = std::move(t);
    return &(*outputs_)[i];
  }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor>* outputs_;
};

using InferFn = Status (*)(InferContext&);
using KernelFn = Status (*)(KernelContext&);

// Declarations of every op's functions, from the op table.
#define FERRY_OP(name, ...)              \
  Status infer_##name(InferContext& ctx); \
  Status ref_##name(KernelContext& ctx);
#include "ir/ops.def"
#undef FERRY_OP

}  // namespace ferry
