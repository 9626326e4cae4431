// frontends/torch/torch_tensor.h — torch.export's tensor metadata and weight payloads as ferry types.
//
// The serialized schema numbers dtypes its own way (torch/_export/serde/schema.py,
// ScalarType): BYTE=1 CHAR=2 SHORT=3 INT=4 LONG=5 HALF=6 FLOAT=7 DOUBLE=8 BOOL=12
// BFLOAT16=13 UINT16=28 UINT32=34 UINT64=35. A size is {"as_int": n} or
// {"as_expr": {"expr_str": <sympy srepr>}} (sympy_expr.h). A weight payload is the
// raw bytes of its storage; the tensor is read at storage_offset with its strides
// (tied weights share one storage), every element checked to lie inside it.
#pragma once

#include <nlohmann/json.hpp>

#include "ferry/status.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace ferry::torch_import {

using Json = nlohmann::json;

/// The ferry dtype of a schema ScalarType number.
Result<DType> dtype_from_torch(int64_t scalar_type);
/// "FLOAT", "LONG", ... for messages.
std::string torch_dtype_name(int64_t scalar_type);

/// One SymInt ({"as_int"} or {"as_expr"}) as a dim.
Result<Dim> dim_from_sym_int(const Json& s);
/// A TensorMeta's dtype and shape (sizes).
Result<std::pair<DType, Shape>> type_from_tensor_meta(const Json& meta);

/// The tensor a payload describes: `storage` holds the raw bytes, `meta` its TensorMeta
/// (static sizes, strides and storage_offset). Contiguous tensors at offset 0 view the
/// storage; others are gathered into a fresh buffer.
Result<Tensor> tensor_from_storage(const Json& meta, const std::shared_ptr<Buffer>& storage);

}  // namespace ferry::torch_import
