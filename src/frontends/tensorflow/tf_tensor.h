// frontends/tensorflow/tf_tensor.h — TensorFlow dtypes, shapes and TensorProtos as ferry types.
#pragma once

#include <string>

#include "ferry/status.h"
#include "frontends/tensorflow/proto/tf_graph.pb.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace ferry::tf_import {

/// "DT_FLOAT", ... ("DT_<n>" for codes ferry does not know).
std::string tf_dtype_name(int dt);
/// The ferry dtype of a TensorFlow DataType; reference types (+100) count as their value type.
Result<DType> dtype_from_tf(int dt);
/// A shape with -1 dims unknown; unknown_rank gives an unknown-rank Shape.
Result<Shape> shape_from_tf(const tfproto::TensorShapeProto& s);
/// Static dims of a shape (every dim >= 0).
Result<std::vector<int64_t>> static_dims_from_tf(const tfproto::TensorShapeProto& s);
/// A constant from a TensorProto: tensor_content or the typed *_val fields
/// (fewer values than elements repeat the last one, as TensorFlow does).
Result<Tensor> tensor_from_tf(const tfproto::TensorProto& p);

}  // namespace ferry::tf_import
