// runtime/step.h — one scheduled unit of a compiled session: a node, or a node
// with the elementwise nodes fused into its epilogue, or a layout reorder.
//
// A Step is made once per input-shape signature (reshape: primitives created,
// weights packed). bind() makes a BoundStep for one execution context: the
// tensors it reads and writes live at fixed places (arena views, constants),
// so BoundStep::run() allocates nothing. Graph inputs are the only tensors
// whose data pointer changes between runs; a BoundStep re-reads its StepIO
// pointers on every run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry {

/// The tensors of one step in one execution context (owned by the context).
struct StepIO {
  std::vector<const Tensor*> inputs;  ///< null for an omitted optional input
  std::vector<Tensor*> outputs;
  uint8_t* scratch = nullptr;         ///< the context's scratch area (max over steps)
};

class BoundStep {
 public:
  virtual ~BoundStep() = default;
  virtual Status run() = 0;
};

class Step {
 public:
  virtual ~Step() = default;
  /// Kernel name for profiles and reports, e.g. "onednn_conv2d_f32[jit:avx512_core]".
  virtual std::string kernel_name() const = 0;
  /// Scratch bytes this step needs during run().
  virtual size_t scratch_bytes() const { return 0; }
  /// The input whose memory output 0 may take over when that input dies here
  /// (elementwise ops: 0; a conv with a sum post-op: the residual), or -1.
  virtual int in_place_input() const { return -1; }
  virtual Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const = 0;
};

}  // namespace ferry
