// export/onnx_exporter.h — IR Graph -> ONNX ModelProto (the writer behind `ferry convert`).
//
// IR op semantics are the newest ONNX opset's, so standard ops map 1:1 onto
// the default domain. The opset written is the lowest one >= 18 (and >= the
// source model's) in which every node means what it means in the IR: the
// export column of ir/ops.def gives each op's (Gelu 20, GroupNormalization 21
// for its per-channel scale, Swish 24, ...), and a few attribute values need
// more (AveragePool with dilations, Pad mode=wrap and Resize
// half_pixel_symmetric 19, QuantizeLinear block_size 21). ferry's own ops
// (export column ferry(N): the fused ops) go to domain "ferry", opset 1,
// documented in docs/ferry_ops.md. Constants become
// initializers (raw_data, little-endian); a constant that is a graph output
// becomes a Constant node. Cast's `to` is written back as the TensorProto
// enum. Node provenance goes into each node's doc_string. The result passes
// onnx.checker.check_model (tests/passes/test_convert_cli.py checks).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <onnx/onnx_pb.h>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

inline constexpr const char* kFerryDomain = "ferry";
inline constexpr int64_t kFerryDomainVersion = 1;
/// The lowest default-domain opset the exporter writes.
inline constexpr int64_t kMinExportOpset = 18;

struct OnnxExportOptions {
  /// Default-domain opset; 0 picks required_opset(g). Lower than required is an error.
  int64_t opset = 0;
  std::string producer_version = "0.1.0";
  /// metadata_props to write (ferry's own keys start with "ferry.", e.g. "ferry.precision").
  std::map<std::string, std::string> metadata;
};

/// True for ferry's own ops (exported in domain "ferry"), false for standard ONNX ops.
bool is_ferry_domain_op(Op op);
/// The ONNX TensorProto.DataType code of a dtype.
int32_t dtype_to_onnx(DType dtype);
/// The IR version that goes with a default-domain opset (onnx.helper.VERSION_TABLE).
int64_t ir_version_for_opset(int64_t opset);
/// The lowest opset >= kMinExportOpset (and >= the source model's, when known)
/// that expresses every node of `g` with its IR semantics.
int64_t required_opset(const Graph& g);

/// Builds the ModelProto. Fails on what ONNX cannot hold (a graph output of unknown type).
Result<onnx::ModelProto> export_onnx_model(const Graph& g, const OnnxExportOptions& options = {});
/// export_onnx_model + serialize to `path`; fails past the 2 GiB protobuf limit.
Status write_onnx_file(const Graph& g, const std::string& path, const OnnxExportOptions& options = {});

}  // namespace ferry
