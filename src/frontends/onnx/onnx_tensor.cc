#include "frontends/onnx/onnx_tensor.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "frontends/onnx/external_data.h"

namespace ferry::onnx_import {
namespace {

static_assert(std::endian::native == std::endian::little, "ONNX raw_data is little-endian");

/// Bytes of a parsed proto's string, kept valid by holding the proto's owner.
class ProtoBytes : public Buffer {
 public:
  ProtoBytes(std::shared_ptr<const void> owner, const std::string& bytes)
      : owner_(std::move(owner)), data_(reinterpret_cast<uint8_t*>(const_cast<char*>(bytes.data()))), size_(bytes.size()) {}
  uint8_t* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  std::shared_ptr<const void> owner_;
  uint8_t* data_;
  size_t size_;
};

// TensorProto.DataType codes up to onnx 1.23 (the system schema stops at 16).
constexpr const char* kOnnxTypeNames[] = {
    "UNDEFINED", "FLOAT",        "UINT8",          "INT8",       "UINT16",         "INT16",
    "INT32",     "INT64",        "STRING",         "BOOL",       "FLOAT16",        "DOUBLE",
    "UINT32",    "UINT64",       "COMPLEX64",      "COMPLEX128", "BFLOAT16",       "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",   "INT4",           "FLOAT4E2M1",
    "FLOAT8E8M0", "UINT2",       "INT2",           "FLOAT6E2M3", "FLOAT6E3M2"};

std::string dims_text(const std::vector<int64_t>& dims) { return "[" + dims_to_string(dims, ',') + "]"; }

/// Copies a repeated field into `t`; integers must lie in [lo, hi] (the storage's range).
template <class Storage, class Field>
Status fill_typed(Tensor& t, const Field& field, const char* field_name, int64_t lo = 0, uint64_t hi = 0) {
  Storage* out = t.data<Storage>();
  for (int i = 0; i < field.size(); ++i) {
    auto v = field.Get(i);
    if constexpr (std::is_integral_v<decltype(v)>) {
      if (std::cmp_less(v, lo) || std::cmp_greater(v, hi))
        return invalid_model(std::string(field_name) + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                             " does not fit " + dtype_name(t.dtype()));
    }
    out[i] = Storage(v);
  }
  return Status::Ok();
}

/// bool storage must hold exactly 0 or 1.
void normalize_bools(Tensor& t) {
  uint8_t* p = t.raw();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
}

Status fill_from_field(Tensor& t, const onnx::TensorProto& p) {
  switch (t.dtype()) {
    case DType::f32: return fill_typed<float>(t, p.float_data(), "float_data");
    case DType::f64: return fill_typed<double>(t, p.double_data(), "double_data");
    case DType::i64: return fill_typed<int64_t>(t, p.int64_data(), "int64_data", INT64_MIN, INT64_MAX);
    case DType::u64: return fill_typed<uint64_t>(t, p.uint64_data(), "uint64_data", 0, UINT64_MAX);
    case DType::u32: return fill_typed<uint32_t>(t, p.uint64_data(), "uint64_data", 0, UINT32_MAX);
    case DType::i32: return fill_typed<int32_t>(t, p.int32_data(), "int32_data", INT32_MIN, INT32_MAX);
    case DType::i16: return fill_typed<int16_t>(t, p.int32_data(), "int32_data", INT16_MIN, INT16_MAX);
    case DType::u16: return fill_typed<uint16_t>(t, p.int32_data(), "int32_data", 0, UINT16_MAX);
    case DType::i8: return fill_typed<int8_t>(t, p.int32_data(), "int32_data", INT8_MIN, INT8_MAX);
    case DType::u8: return fill_typed<uint8_t>(t, p.int32_data(), "int32_data", 0, UINT8_MAX);
    case DType::boolean: return fill_typed<uint8_t>(t, p.int32_data(), "int32_data", 0, 1);
    case DType::f16:
    case DType::bf16:
      // The 16-bit pattern, zero-extended into int32_data.
      return fill_typed<uint16_t>(t, p.int32_data(), "int32_data", 0, UINT16_MAX);
    default: return internal_error("no typed field for " + std::string(dtype_name(t.dtype())));
  }
}

/// Number of entries in the typed field that carries `dtype`, and its name.
std::pair<int64_t, const char*> typed_field_size(DType dtype, const onnx::TensorProto& p) {
  switch (dtype) {
    case DType::f32: return {p.float_data_size(), "float_data"};
    case DType::f64: return {p.double_data_size(), "double_data"};
    case DType::i64: return {p.int64_data_size(), "int64_data"};
    case DType::u32:
    case DType::u64: return {p.uint64_data_size(), "uint64_data"};
    default: return {p.int32_data_size(), "int32_data"};
  }
}

/// Any typed field in use, for the "both raw_data and a typed field" check.
bool has_any_typed_field(const onnx::TensorProto& p) {
  return p.float_data_size() || p.int32_data_size() || p.int64_data_size() || p.double_data_size() ||
         p.uint64_data_size() || p.string_data_size();
}

Result<Tensor> from_external(const onnx::TensorProto& p, DType dtype, const std::vector<int64_t>& dims,
                             int64_t numel, const ExternalDataRoot* root) {
  if (!root) return invalid_model("external data is not allowed here");
  if (p.has_raw_data() || has_any_typed_field(p))
    return invalid_model("has external data and also inline data");
  uint64_t bytes = uint64_t(numel) * dtype_size(dtype);
  FERRY_ASSIGN_OR_RETURN(auto buffer, map_external_data(p, root->dir, bytes));
  FERRY_ASSIGN_OR_RETURN(Tensor t, Tensor::view(dtype, dims, buffer));
  bool misaligned = reinterpret_cast<uintptr_t>(t.raw()) % dtype_size(dtype) != 0;
  if (dtype == DType::boolean) {
    for (int64_t i = 0; i < numel; ++i)
      if (t.raw()[i] > 1)
        return invalid_model("bool external data holds byte " + std::to_string(t.raw()[i]) + " at element " +
                             std::to_string(i) + " (expected 0 or 1)");
  }
  // An offset that is not a multiple of the element size would make typed
  // access misaligned: copy those (rare) tensors instead of mapping them.
  if (misaligned) return t.clone();
  return t;
}

}  // namespace

std::string onnx_dtype_name(int32_t code) {
  if (code >= 0 && size_t(code) < std::size(kOnnxTypeNames)) return kOnnxTypeNames[code];
  return "type " + std::to_string(code);
}

Result<DType> dtype_from_onnx(int32_t code) {
  switch (code) {
    case onnx::TensorProto::FLOAT: return DType::f32;
    case onnx::TensorProto::UINT8: return DType::u8;
    case onnx::TensorProto::INT8: return DType::i8;
    case onnx::TensorProto::UINT16: return DType::u16;
    case onnx::TensorProto::INT16: return DType::i16;
    case onnx::TensorProto::INT32: return DType::i32;
    case onnx::TensorProto::INT64: return DType::i64;
    case onnx::TensorProto::BOOL: return DType::boolean;
    case onnx::TensorProto::FLOAT16: return DType::f16;
    case onnx::TensorProto::DOUBLE: return DType::f64;
    case onnx::TensorProto::UINT32: return DType::u32;
    case onnx::TensorProto::UINT64: return DType::u64;
    case onnx::TensorProto::BFLOAT16: return DType::bf16;
    case onnx::TensorProto::UNDEFINED: return invalid_model("data type is UNDEFINED");
    default: break;
  }
  if (code > 0 && size_t(code) < std::size(kOnnxTypeNames))
    return unsupported("data type " + onnx_dtype_name(code) + " (" + std::to_string(code) + ") is not supported");
  return invalid_model("unknown data type " + std::to_string(code));
}

Result<Tensor> tensor_from_proto(const onnx::TensorProto& p, const ExternalDataRoot* root) {
  FERRY_ASSIGN_OR_RETURN(DType dtype, dtype_from_onnx(p.data_type()));
  if (p.has_segment()) return unsupported("segmented tensors are not supported");
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  auto numel = checked_numel(dims);
  if (!numel) return invalid_model("dims " + dims_text(dims) + " are negative or too large");
  if (p.data_location() == onnx::TensorProto::EXTERNAL) return from_external(p, dtype, dims, *numel, root);

  // Every size check comes before the allocation: a model may claim huge dims with no data.
  const std::string type = std::string(dtype_name(dtype)) + dims_text(dims);
  const uint64_t nbytes = uint64_t(*numel) * dtype_size(dtype);
  if (p.has_raw_data()) {
    if (has_any_typed_field(p)) return invalid_model("has both raw_data and a typed data field");
    const std::string& raw = p.raw_data();
    if (raw.size() != nbytes)
      return invalid_model("raw_data has " + std::to_string(raw.size()) + " bytes, expected " +
                           std::to_string(nbytes) + " for " + type);
    // A view where the bytes allow it: not booleans (normalized below), not short
    // strings (kept inside the string object), 16-byte aligned like malloc's.
    if (root && root->proto_owner && dtype != DType::boolean && raw.size() >= 64 &&
        reinterpret_cast<uintptr_t>(raw.data()) % 16 == 0)
      return Tensor::view(dtype, dims, std::make_shared<ProtoBytes>(root->proto_owner, raw));
    FERRY_ASSIGN_OR_RETURN(Tensor t, Tensor::uninitialized(dtype, dims));
    if (!raw.empty()) std::memcpy(t.raw(), raw.data(), raw.size());
    if (dtype == DType::boolean) normalize_bools(t);
    return t;
  }
  auto [count, field] = typed_field_size(dtype, p);
  if (count != *numel) {
    if (count == 0 && !has_any_typed_field(p))
      return invalid_model("has no data (expected " + std::to_string(*numel) + " elements for " + type + ")");
    return invalid_model(std::string(field) + " has " + std::to_string(count) + " values, expected " +
                         std::to_string(*numel) + " for " + type);
  }
  FERRY_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, dims));
  FERRY_TRY(fill_from_field(t, p));
  return t;
}

}  // namespace ferry::onnx_import
