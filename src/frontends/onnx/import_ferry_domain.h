// frontends/onnx/import_ferry_domain.h — nodes of domain "ferry", as `ferry convert` writes them.
#pragma once

#include "frontends/onnx/onnx_node.h"

namespace ferry::onnx_import {

/// The ONNX domain of ferry's own ops (docs/ferry_ops.md).
inline constexpr const char* kFerryDomainName = "ferry";

/// Imports a node of domain "ferry" 1:1 as the IR op of the same name: every
/// input, every attribute its ops.def schema declares, every output.
Status import_ferry_domain(OnnxNode& n);

}  // namespace ferry::onnx_import
