// Indexing and padding ATen ops: x[idx] (index.Tensor with one index tensor), F.pad,
// torch.roll, Tensor.new_zeros, fill, cumsum. Swin's relative position bias (table[index]), its
// window padding and its cyclic shift use them.
#include <algorithm>

#include "frontends/torch/import_table.h"

namespace ferry::torch_import {
namespace {

Result<int64_t> known_rank(TorchNode& n, Value* x) {
  if (!x->shape().rank_known()) return n.unsupported("the rank of the input is not known at import");
  return x->shape().rank();
}

/// x along `dim` rotated by `shift` (torch.roll): Concat(x[n - s:], x[:n - s]) with s = shift mod n.
Result<Value*> roll_axis(TorchNode& n, Value* x, int64_t dim, int64_t shift) {
  const Dim& d = x->shape()[size_t(dim)];
  if (!d.is_static()) return n.unsupported("torch.roll along dim " + std::to_string(dim) + ", whose size is not known at import");
  const int64_t len = d.value();
  const int64_t s = len == 0 ? 0 : ((shift % len) + len) % len;
  if (s == 0) return x;
  auto part = [&](int64_t b, int64_t e) {
    return n.helper1(Op::Slice, {x, n.const_i64({b}, "starts"), n.const_i64({e}, "ends"), n.const_i64({dim}, "axes")});
  };
  AttrMap a;
  a.set("axis", dim);
  return n.helper1(Op::Concat, {part(len - s, len), part(0, len - s)}, a);
}

}  // namespace

Status import_index(TorchNode& n) {  // self[indices[0]]: one index tensor on dim 0 is Gather(axis=0)
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  const Json* arg = n.arg("indices");
  if (!arg || !arg->contains("as_tensors"))
    return n.unsupported("indices with None entries (x[:, idx]) are not imported", "use torch.index_select(x, dim, idx)");
  FERRY_ASSIGN_OR_RETURN(std::vector<Value*> idx, n.tensors("indices"));
  if (idx.size() != 1)
    return n.unsupported("advanced indexing with " + std::to_string(idx.size()) + " index tensors (only one is imported)",
                         "use torch.gather / index_select, or flatten the indices");
  if (idx[0]->dtype() == DType::boolean || idx[0]->dtype() == DType::u8)
    return n.unsupported("boolean-mask indexing (a data-dependent output shape)", "use torch.where");
  AttrMap a;
  a.set("axis", int64_t(0));
  n.set_output(0, n.emit1(Op::Gather, {x, idx[0]}, a));
  return n.arg_status();
}

Status import_pad(TorchNode& n) {  // torch pads [b, e] pairs from the last dim backwards
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, known_rank(n, x));
  const std::vector<int64_t> pad = n.ints_or("pad", {});
  const std::string mode = n.string_or("mode", "constant");
  const double value = n.float_or("value", 0.0);
  FERRY_TRY(n.arg_status());
  if (pad.size() % 2 != 0 || int64_t(pad.size()) > 2 * rank)
    return invalid_model("pad has " + std::to_string(pad.size()) + " entries for a rank-" + std::to_string(rank) + " input");
  std::vector<int64_t> onnx(size_t(2 * rank), 0);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const size_t axis = size_t(rank) - 1 - i;
    onnx[axis] = pad[2 * i];
    onnx[axis + size_t(rank)] = pad[2 * i + 1];
  }
  if (std::all_of(onnx.begin(), onnx.end(), [](int64_t p) { return p == 0; })) {
    n.set_output(0, n.emit1(Op::Identity, {x}));
    return Status::Ok();
  }
  AttrMap a;
  if (mode == "constant") a.set("mode", std::string("constant"));
  else if (mode == "reflect") a.set("mode", std::string("reflect"));
  else if (mode == "replicate") a.set("mode", std::string("edge"));
  else if (mode == "circular") a.set("mode", std::string("wrap"));
  else return invalid_model("pad mode '" + mode + "'");
  std::vector<Value*> ins = {x, n.const_i64(onnx, "pads")};
  if (mode == "constant") ins.push_back(n.scalar_like(value, x, "value"));
  n.set_output(0, n.emit1(Op::Pad, ins, a));
  return Status::Ok();
}

Status import_roll(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, known_rank(n, x));
  const std::vector<int64_t> shifts = n.ints_or("shifts", {});
  const std::vector<int64_t> dims = n.ints_or("dims", {});
  FERRY_TRY(n.arg_status());
  if (dims.empty()) return n.unsupported("torch.roll without dims (over the flattened tensor)", "pass dims=");
  if (dims.size() != shifts.size()) return invalid_model("roll: shifts and dims differ in length");
  Value* y = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i] < 0 ? dims[i] + rank : dims[i];
    if (d < 0 || d >= rank) return invalid_model("roll dim " + std::to_string(dims[i]) + " is out of range");
    FERRY_ASSIGN_OR_RETURN(y, roll_axis(n, y, d, shifts[i]));
  }
  n.set_output(0, n.emit1(Op::Identity, {y}));
  return Status::Ok();
}

Status import_cumsum(TorchNode& n) {  // CumSum along dim, in dtype= if given
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  const int64_t dim = n.int_or("dim", 0);
  auto dt = n.dtype_arg("dtype");
  FERRY_TRY(n.arg_status());
  // torch sums integers (and bools) in int64.
  if (dt) x = n.cast(x, *dt);
  else if (!is_floating(x->dtype()) && x->dtype() != DType::undefined && x->dtype() != DType::i64) x = n.cast(x, DType::i64);
  Tensor axis = Tensor::empty(DType::i64, {});
  axis.set_double(0, double(dim));
  n.set_output(0, n.emit1(Op::CumSum, {x, n.constant(std::move(axis), "axis")}));
  return Status::Ok();
}

Status import_fill(TorchNode& n) {  // every element = value, in self's dtype and shape
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  auto v = n.scalar("value");
  FERRY_TRY(n.arg_status());
  if (!v) return invalid_model("fill needs a value");
  n.set_output(0, n.emit1(Op::Expand, {n.scalar_like(*v, x, "value"), n.helper1(Op::Shape, {x})}));
  return Status::Ok();
}

Status import_new_zeros(TorchNode& n) {  // zeros of `size`, self's dtype unless dtype= is given
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  auto size = n.sym_ints("size");
  const DType t = n.dtype_arg("dtype").value_or(x->dtype() == DType::undefined ? DType::f32 : x->dtype());
  FERRY_TRY(n.arg_status());
  if (!size) return invalid_model("new_zeros needs size");
  Tensor value = Tensor::empty(t, {1});
  value.set_double(0, 0.0);
  AttrMap a;
  a.set("value", value);
  n.set_output(0, n.emit1(Op::ConstantOfShape, {n.shape_value(*size, "shape")}, a));
  return Status::Ok();
}

}  // namespace ferry::torch_import
