#include "frontends/torch/torch_tensor.h"

#include <cstring>
#include <iterator>

#include "frontends/torch/sympy_expr.h"

namespace ferry::torch_import {

Result<DType> dtype_from_torch(int64_t t) {
  switch (t) {
    case 1: return DType::u8;
    case 2: return DType::i8;
    case 3: return DType::i16;
    case 4: return DType::i32;
    case 5: return DType::i64;
    case 6: return DType::f16;
    case 7: return DType::f32;
    case 8: return DType::f64;
    case 12: return DType::boolean;
    case 13: return DType::bf16;
    case 28: return DType::u16;
    case 34: return DType::u32;
    case 35: return DType::u64;
    default: break;
  }
  return unsupported("dtype " + torch_dtype_name(t) + " is not supported");
}

std::string torch_dtype_name(int64_t t) {
  static const char* kNames[] = {"UNKNOWN", "BYTE", "CHAR", "SHORT", "INT", "LONG", "HALF", "FLOAT", "DOUBLE",
                                 "COMPLEXHALF", "COMPLEXFLOAT", "COMPLEXDOUBLE", "BOOL", "BFLOAT16"};
  if (t >= 0 && t < int64_t(std::size(kNames))) return kNames[t];
  switch (t) {
    case 28: return "UINT16";
    case 29: return "FLOAT8E4M3FN";
    case 30: return "FLOAT8E5M2";
    case 31: return "FLOAT8E4M3FNUZ";
    case 32: return "FLOAT8E5M2FNUZ";
    case 33: return "FLOAT8E8M0FNU";
    case 34: return "UINT32";
    case 35: return "UINT64";
    default: return "#" + std::to_string(t);
  }
}

Result<Dim> dim_from_sym_int(const Json& s) {
  if (!s.is_object() || s.size() != 1) return invalid_model("a size is not a SymInt object");
  if (auto it = s.find("as_int"); it != s.end()) {
    if (!it->is_number_integer()) return invalid_model("a size's as_int is not an integer");
    const int64_t v = it->get<int64_t>();
    if (v < 0 || v > kMaxDim) return invalid_model("size " + std::to_string(v) + " is out of range");
    return Dim(v);
  }
  if (auto it = s.find("as_expr"); it != s.end()) {
    auto e = it->find("expr_str");
    if (!it->is_object() || e == it->end() || !e->is_string()) return invalid_model("a symbolic size has no expr_str");
    FERRY_ASSIGN_OR_RETURN(SymExprNode node, parse_sympy(e->get_ref<const std::string&>()));
    return sympy_to_dim(node);
  }
  return invalid_model("a size is neither as_int nor as_expr");
}

Result<std::pair<DType, Shape>> type_from_tensor_meta(const Json& meta) {
  if (!meta.is_object()) return invalid_model("tensor_meta is not an object");
  auto dt = meta.find("dtype");
  auto sizes = meta.find("sizes");
  if (dt == meta.end() || !dt->is_number_integer()) return invalid_model("tensor_meta has no integer dtype");
  if (sizes == meta.end() || !sizes->is_array()) return invalid_model("tensor_meta has no sizes list");
  if (sizes->size() > 64) return invalid_model("tensor_meta has rank " + std::to_string(sizes->size()) + " (over 64)");
  if (auto layout = meta.find("layout"); layout != meta.end() && layout->is_number_integer() && *layout != 7)
    return unsupported("tensor layout " + std::to_string(layout->get<int64_t>()) + " is not strided (sparse tensors are not supported)");
  FERRY_ASSIGN_OR_RETURN(DType dtype, dtype_from_torch(dt->get<int64_t>()));
  std::vector<Dim> dims;
  for (const Json& s : *sizes) {
    FERRY_ASSIGN_OR_RETURN(Dim d, dim_from_sym_int(s));
    dims.push_back(std::move(d));
  }
  return std::make_pair(dtype, Shape(std::move(dims)));
}

namespace {

Result<std::vector<int64_t>> static_ints(const Json& list, const char* what) {
  if (!list.is_array()) return invalid_model(std::string("tensor_meta ") + what + " is not a list");
  std::vector<int64_t> out;
  for (const Json& s : list) {
    auto it = s.is_object() ? s.find("as_int") : s.end();
    if (!s.is_object() || it == s.end() || !it->is_number_integer())
      return invalid_model(std::string("a weight's ") + what + " must be static integers");
    out.push_back(it->get<int64_t>());
  }
  return out;
}

/// Copies the strided tensor out of the storage; every element offset checked by the caller.
void gather_strided(const uint8_t* src, uint8_t* dst, size_t elem, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& strides, int64_t offset) {
  const size_t rank = dims.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  for (int64_t n = 0; n < numel; ++n) {
    int64_t at = offset;
    for (size_t i = 0; i < rank; ++i) at += idx[i] * strides[i];
    std::memcpy(dst + size_t(n) * elem, src + size_t(at) * elem, elem);
    for (size_t i = rank; i-- > 0;) {
      if (++idx[i] < dims[i]) break;
      idx[i] = 0;
    }
  }
}

}  // namespace

Result<Tensor> tensor_from_storage(const Json& meta, const std::shared_ptr<Buffer>& storage) {
  FERRY_ASSIGN_OR_RETURN(auto type, type_from_tensor_meta(meta));
  if (!type.second.is_static()) return invalid_model("a weight has a symbolic size");
  const std::vector<int64_t> dims = type.second.static_dims();
  auto st = meta.find("strides");
  auto off = meta.find("storage_offset");
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> strides, st == meta.end() ? Result<std::vector<int64_t>>(std::vector<int64_t>{})
                                                                         : static_ints(*st, "strides"));
  int64_t offset = 0;
  if (off != meta.end()) {
    FERRY_ASSIGN_OR_RETURN(auto o, static_ints(Json::array({*off}), "storage_offset"));
    offset = o[0];
  }
  if (strides.size() != dims.size())
    return invalid_model("a weight has " + std::to_string(strides.size()) + " strides for rank " + std::to_string(dims.size()));
  auto numel = checked_numel(dims);
  if (!numel) return invalid_model("a weight's size overflows");
  const size_t elem = dtype_size(type.first);
  const uint64_t storage_elems = storage->size() / elem;
  // The furthest element: offset + sum (d-1)*stride; all strides must be >= 0.
  int64_t last = offset;
  bool contiguous = offset == 0;
  int64_t expect = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    if (strides[i] < 0 || offset < 0) return invalid_model("a weight has a negative stride or storage offset");
    if (dims[i] > 1 && strides[i] != expect) contiguous = false;
    expect *= dims[i];
    if (dims[i] > 0) {
      if (strides[i] > 0 && dims[i] - 1 > (kMaxDim - last) / strides[i]) return invalid_model("a weight's strides overflow");
      last += (dims[i] - 1) * strides[i];
    }
  }
  if (*numel > 0 && uint64_t(last) >= storage_elems)
    return invalid_model("a weight reads element " + std::to_string(last) + " of a storage holding " +
                         std::to_string(storage_elems) + " " + dtype_name(type.first) + " elements");
  // bool bytes other than 0 and 1 are not bools: such a payload is copied and normalized.
  if (contiguous && type.first != DType::boolean) return Tensor::view(type.first, dims, storage, 0);
  FERRY_ASSIGN_OR_RETURN(Tensor t, Tensor::uninitialized(type.first, dims));
  if (*numel > 0) gather_strided(storage->cdata(), t.raw(), elem, dims, strides, offset);
  if (type.first == DType::boolean)
    for (int64_t i = 0; i < *numel; ++i) t.raw()[i] = t.raw()[i] != 0;
  return t;
}

}  // namespace ferry::torch_import
