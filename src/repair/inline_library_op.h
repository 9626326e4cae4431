// repair/inline_library_op.h — a node of a custom op replaced by its op-library
// graph (repair/op_library.h) during the ONNX import.
#pragma once

#include "frontends/onnx/onnx_node.h"
#include "repair/op_library.h"

namespace ferry::repair {

/// Emits `entry`'s graph (its attributes taken from the node) in place of `n`.
/// An unsupported status says why the entry does not apply to this node (an
/// undeclared attribute, a required one missing, input count or dtype); an
/// invalid-argument status is an error of the library (its graph does not verify).
Status inline_library_op(const OpLibraryEntry& entry, onnx_import::OnnxNode& n);

}  // namespace ferry::repair
