#include "frontends/tensorflow/tf_tensor.h"

#include <bit>
#include <cstring>
#include <utility>

namespace ferry::tf_import {
namespace {

static_assert(std::endian::native == std::endian::little, "TensorFlow tensor_content is little-endian");

using tfproto::DataType;

/// Copies `field` into t, repeating the last value when it is shorter (TensorFlow's rule).
template <class Storage, class Field>
Status fill(Tensor& t, const Field& field, const char* name) {
  const int64_t n = t.numel();
  if (field.size() > n)
    return invalid_model(std::string(name) + " has " + std::to_string(field.size()) + " values for " +
                         std::to_string(n) + " elements");
  if (field.size() == 0) return Status::Ok();  // zeros
  Storage* out = t.data<Storage>();
  for (int64_t i = 0; i < n; ++i) {
    auto v = field.Get(int(std::min<int64_t>(i, field.size() - 1)));
    if constexpr (std::is_integral_v<decltype(v)> && !std::is_same_v<decltype(v), bool>) {
      if (std::cmp_less(v, std::numeric_limits<Storage>::min()) || std::cmp_greater(v, std::numeric_limits<Storage>::max()))
        return invalid_model(std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                             " does not fit " + dtype_name(t.dtype()));
    }
    out[i] = Storage(v);
  }
  return Status::Ok();
}

}  // namespace

std::string tf_dtype_name(int dt) {
  int base = dt > 100 ? dt - 100 : dt;
  if (tfproto::DataType_IsValid(base))
    return tfproto::DataType_Name(DataType(base)) + (dt > 100 ? "_REF" : "");
  return "DT_" + std::to_string(dt);
}

Result<DType> dtype_from_tf(int dt) {
  switch (dt > 100 ? dt - 100 : dt) {
    case tfproto::DT_FLOAT: return DType::f32;
    case tfproto::DT_DOUBLE: return DType::f64;
    case tfproto::DT_HALF: return DType::f16;
    case tfproto::DT_BFLOAT16: return DType::bf16;
    case tfproto::DT_INT8: return DType::i8;
    case tfproto::DT_UINT8: return DType::u8;
    case tfproto::DT_INT16: return DType::i16;
    case tfproto::DT_UINT16: return DType::u16;
    case tfproto::DT_INT32: return DType::i32;
    case tfproto::DT_UINT32: return DType::u32;
    case tfproto::DT_INT64: return DType::i64;
    case tfproto::DT_UINT64: return DType::u64;
    case tfproto::DT_BOOL: return DType::boolean;
    default:
      if (!tfproto::DataType_IsValid(dt > 100 ? dt - 100 : dt) || dt == 100 || dt == 0)
        return invalid_model("dtype " + std::to_string(dt) + " is not a TensorFlow DataType");
      return unsupported("dtype " + tf_dtype_name(dt) + " is not supported");
  }
}

Result<Shape> shape_from_tf(const tfproto::TensorShapeProto& s) {
  if (s.unknown_rank()) return Shape::unknown_rank();
  std::vector<Dim> dims;
  for (const auto& d : s.dim()) {
    if (d.size() > kMaxDim) return invalid_model("dimension " + std::to_string(d.size()) + " is too large");
    if (d.size() < -1) return invalid_model("dimension " + std::to_string(d.size()) + " is negative");
    dims.push_back(d.size() >= 0 ? Dim(d.size()) : Dim::unknown());
  }
  return Shape(std::move(dims));
}

Result<std::vector<int64_t>> static_dims_from_tf(const tfproto::TensorShapeProto& s) {
  if (s.unknown_rank()) return invalid_model("tensor shape has unknown rank");
  std::vector<int64_t> dims;
  for (const auto& d : s.dim()) {
    if (d.size() < 0 || d.size() > kMaxDim)
      return invalid_model("tensor dimension " + std::to_string(d.size()) + " is invalid");
    dims.push_back(d.size());
  }
  return dims;
}

Result<Tensor> tensor_from_tf(const tfproto::TensorProto& p) {
  if (p.dtype() == tfproto::DT_STRING) return unsupported("string tensors are not supported");
  FERRY_ASSIGN_OR_RETURN(DType dt, dtype_from_tf(p.dtype()));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, static_dims_from_tf(p.tensor_shape()));
  FERRY_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dt, dims));
  if (!p.tensor_content().empty()) {
    if (p.tensor_content().size() != t.nbytes())
      return invalid_model("tensor_content has " + std::to_string(p.tensor_content().size()) + " bytes, " +
                           t.type_string() + " needs " + std::to_string(t.nbytes()));
    std::memcpy(t.raw(), p.tensor_content().data(), t.nbytes());
    if (dt == DType::boolean)
      for (int64_t i = 0; i < t.numel(); ++i) t.raw()[i] = t.raw()[i] != 0;
    return t;
  }
  switch (dt) {
    case DType::f32: FERRY_TRY(fill<float>(t, p.float_val(), "float_val")); break;
    case DType::f64: FERRY_TRY(fill<double>(t, p.double_val(), "double_val")); break;
    case DType::i32: FERRY_TRY(fill<int32_t>(t, p.int_val(), "int_val")); break;
    case DType::i16: FERRY_TRY(fill<int16_t>(t, p.int_val(), "int_val")); break;
    case DType::i8: FERRY_TRY(fill<int8_t>(t, p.int_val(), "int_val")); break;
    case DType::u8: FERRY_TRY(fill<uint8_t>(t, p.int_val(), "int_val")); break;
    case DType::u16: FERRY_TRY(fill<uint16_t>(t, p.int_val(), "int_val")); break;
    case DType::i64: FERRY_TRY(fill<int64_t>(t, p.int64_val(), "int64_val")); break;
    case DType::u32: FERRY_TRY(fill<uint32_t>(t, p.uint32_val(), "uint32_val")); break;
    case DType::u64: FERRY_TRY(fill<uint64_t>(t, p.uint64_val(), "uint64_val")); break;
    case DType::boolean: FERRY_TRY(fill<bool>(t, p.bool_val(), "bool_val")); break;
    case DType::f16:
    case DType::bf16: FERRY_TRY(fill<uint16_t>(t, p.half_val(), "half_val")); break;
    default: return unsupported(std::string("constants of dtype ") + dtype_name(dt) + " are not supported");
  }
  return t;
}

}  // namespace ferry::tf_import
