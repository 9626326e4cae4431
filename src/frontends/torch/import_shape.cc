// Shape and data-movement ATen ops, and the SymInt arithmetic torch.export writes for
// dynamic sizes: sym_size.int(x, d) is Shape(x)[d:d+1], an i64[1] value; _operator.mul
// and friends combine those; view / expand / slice / arange read them back.
#include <algorithm>
#include <limits>
#include <numeric>

#include "frontends/torch/import_table.h"

namespace ferry::torch_import {
namespace {

Result<int64_t> rank_of(TorchNode& n, Value* x) {
  if (!x->shape().rank_known()) return n.unsupported("the rank of the input is not known at import");
  return x->shape().rank();
}

Result<int64_t> norm_dim(TorchNode& n, int64_t dim, int64_t rank, const char* what = "dim") {
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= std::max<int64_t>(rank, 1))
    return invalid_model(std::string(what) + " " + std::to_string(dim) + " is out of range for rank " + std::to_string(rank));
  return d;
}

Value* transpose_perm(TorchNode& n, Value* x, std::vector<int64_t> perm) {
  AttrMap a;
  a.set("perm", std::move(perm));
  return n.emit1(Op::Transpose, {x}, a);
}

Status sym_binary(TorchNode& n, Op op, int64_t (*fold)(int64_t, int64_t)) {
  auto a = n.sym_int("a");
  auto b = n.sym_int("b");
  FERRY_TRY(n.arg_status());
  if (!a || !b) return invalid_model("a SymInt operator needs arguments a and b");
  if (a->known() && b->known()) {
    if (op == Op::Div && b->value == 0) return invalid_model("SymInt division by zero");
    n.set_sym_output(0, {fold(a->value, b->value), nullptr});
    return Status::Ok();
  }
  Value* va = n.shape_value({*a}, "a");
  Value* vb = n.shape_value({*b}, "b");
  n.set_sym_output(0, {0, n.emit1(op, {va, vb})});
  return Status::Ok();
}

}  // namespace

Status import_sym_size(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  FERRY_ASSIGN_OR_RETURN(int64_t d, norm_dim(n, n.int_or("dim", 0), rank));
  if (x->shape()[size_t(d)].is_static()) {
    n.set_sym_output(0, {x->shape()[size_t(d)].value(), nullptr});
    return n.arg_status();
  }
  AttrMap a;
  a.set("start", d);
  a.set("end", d + 1);
  n.set_sym_output(0, {0, n.emit1(Op::Shape, {x}, a)});
  return n.arg_status();
}

Status import_sym_add(TorchNode& n) { return sym_binary(n, Op::Add, [](int64_t a, int64_t b) { return a + b; }); }
Status import_sym_sub(TorchNode& n) { return sym_binary(n, Op::Sub, [](int64_t a, int64_t b) { return a - b; }); }
Status import_sym_mul(TorchNode& n) { return sym_binary(n, Op::Mul, [](int64_t a, int64_t b) { return a * b; }); }
Status import_sym_floordiv(TorchNode& n) {
  return sym_binary(n, Op::Div, [](int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  });
}

Status import_view(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  auto size = n.sym_ints(n.has("size") ? "size" : "shape");
  FERRY_TRY(n.arg_status());
  if (!size) return invalid_model("argument 'size' is missing");
  AttrMap a;
  a.set("allowzero", int64_t(1));  // torch sizes are literal: 0 means 0
  n.set_output(0, n.emit1(Op::Reshape, {x, n.shape_value(*size, "shape")}, a));
  return Status::Ok();
}

Status import_permute(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  std::vector<int64_t> dims = n.ints_or("dims", {});
  FERRY_TRY(n.arg_status());
  const int64_t rank = int64_t(dims.size());
  for (int64_t& d : dims) {
    FERRY_ASSIGN_OR_RETURN(d, norm_dim(n, d, rank));
  }
  n.set_output(0, transpose_perm(n, x, dims));
  return Status::Ok();
}

Status import_transpose(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  FERRY_ASSIGN_OR_RETURN(int64_t d0, norm_dim(n, n.int_or("dim0", 0), rank));
  FERRY_ASSIGN_OR_RETURN(int64_t d1, norm_dim(n, n.int_or("dim1", 0), rank));
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  if (rank > 0) std::swap(perm[size_t(d0)], perm[size_t(d1)]);
  n.set_output(0, transpose_perm(n, x, perm));
  return n.arg_status();
}

Status import_t(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  if (rank > 2) return invalid_model("t() of a rank-" + std::to_string(rank) + " tensor");
  n.set_output(0, rank < 2 ? n.emit1(Op::Identity, {x}) : transpose_perm(n, x, {1, 0}));
  return n.arg_status();
}

Status import_flatten(TorchNode& n) {  // shape[:start] + [-1] + shape[end+1:]
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  if (rank == 0) {
    n.set_output(0, n.emit1(Op::Reshape, {x, n.const_i64({1}, "shape")}));
    return n.arg_status();
  }
  FERRY_ASSIGN_OR_RETURN(int64_t start, norm_dim(n, n.int_or("start_dim", 0), rank, "start_dim"));
  FERRY_ASSIGN_OR_RETURN(int64_t end, norm_dim(n, n.int_or("end_dim", -1), rank, "end_dim"));
  if (start > end) return invalid_model("flatten start_dim > end_dim");
  if (x->shape().is_static()) {  // a constant target keeps the output shape static
    std::vector<int64_t> d = x->shape().static_dims(), out(d.begin(), d.begin() + start);
    int64_t m = 1;
    for (int64_t i = start; i <= end; ++i) m *= d[size_t(i)];
    out.push_back(m);
    out.insert(out.end(), d.begin() + end + 1, d.end());
    n.set_output(0, n.emit1(Op::Reshape, {x, n.const_i64(out, "shape")}));
    return n.arg_status();
  }
  std::vector<Value*> parts;
  if (start > 0) {
    AttrMap a;
    a.set("end", start);
    parts.push_back(n.helper1(Op::Shape, {x}, a));
  }
  parts.push_back(n.const_i64({-1}, "minus_one"));
  if (end + 1 < rank) {
    AttrMap a;
    a.set("start", end + 1);
    parts.push_back(n.helper1(Op::Shape, {x}, a));
  }
  AttrMap c;
  c.set("axis", int64_t(0));
  Value* shape = parts.size() == 1 ? parts[0] : n.helper1(Op::Concat, parts, c);
  n.set_output(0, n.emit1(Op::Reshape, {x, shape}));
  return n.arg_status();
}

Status import_unflatten(TorchNode& n) {  // shape[:dim] + sizes + shape[dim+1:]
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  FERRY_ASSIGN_OR_RETURN(int64_t dim, norm_dim(n, n.int_or("dim", 0), rank));
  auto sizes = n.sym_ints("sizes");
  FERRY_TRY(n.arg_status());
  if (!sizes || sizes->empty()) return invalid_model("argument 'sizes' is missing or empty");
  std::vector<Value*> parts;
  if (dim > 0) {
    AttrMap a;
    a.set("end", dim);
    parts.push_back(n.helper1(Op::Shape, {x}, a));
  }
  parts.push_back(n.shape_value(*sizes, "sizes"));
  if (dim + 1 < rank) {
    AttrMap a;
    a.set("start", dim + 1);
    parts.push_back(n.helper1(Op::Shape, {x}, a));
  }
  AttrMap c;
  c.set("axis", int64_t(0));
  Value* shape = parts.size() == 1 ? parts[0] : n.helper1(Op::Concat, parts, c);
  n.set_output(0, n.emit1(Op::Reshape, {x, shape}));
  return Status::Ok();
}

Status import_unsqueeze(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  FERRY_ASSIGN_OR_RETURN(int64_t d, norm_dim(n, n.int_or("dim", 0), rank + 1));
  n.set_output(0, n.emit1(Op::Unsqueeze, {x, n.const_i64({d}, "axes")}));
  return n.arg_status();
}

Status import_squeeze(TorchNode& n) {
  // torch leaves a dim that is not 1 alone; ONNX Squeeze would fail on it.
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  std::vector<int64_t> dims;
  if (n.has("dim")) {
    dims = n.ints_or("dim", {});
  } else {
    for (int64_t i = 0; i < rank; ++i)
      if (x->shape()[size_t(i)].is_static() && x->shape()[size_t(i)].value() == 1) dims.push_back(i);
  }
  FERRY_TRY(n.arg_status());
  std::vector<int64_t> axes;
  for (int64_t d : dims) {
    FERRY_ASSIGN_OR_RETURN(int64_t a, norm_dim(n, d, rank));
    const Dim& dim = x->shape()[size_t(a)];
    if (dim.is_static() && dim.value() != 1) continue;
    if (!dim.is_static()) return n.unsupported("squeeze of dim " + std::to_string(a) + " whose size is only known at run time");
    axes.push_back(a);
  }
  n.set_output(0, axes.empty() ? n.emit1(Op::Identity, {x}) : n.emit1(Op::Squeeze, {x, n.const_i64(axes, "axes")}));
  return Status::Ok();
}

Status import_expand(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  auto size = n.sym_ints("size");
  FERRY_TRY(n.arg_status());
  if (!size) return invalid_model("argument 'size' is missing");
  // -1 keeps the input's dim; Expand broadcasts 1 to it, the same thing.
  for (SymVal& s : *size)
    if (s.known() && s.value == -1) s.value = 1;
  n.set_output(0, n.emit1(Op::Expand, {x, n.shape_value(*size, "shape")}));
  return Status::Ok();
}

Status import_cat(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(std::vector<Value*> xs, n.tensors("tensors"));
  if (xs.empty()) return invalid_model("cat of no tensors");
  // torch.cat skips legacy empty 1-D tensors; and promotes dtypes like the binary ops.
  DType t = xs[0]->dtype();
  for (Value* v : xs)
    if (is_floating(v->dtype()) && !is_floating(t)) t = v->dtype();
  for (Value*& v : xs) v = n.cast(v, t);
  AttrMap a;
  a.set("axis", n.int_or("dim", 0));
  n.set_output(0, n.emit1(Op::Concat, xs, a));
  return n.arg_status();
}

Status import_slice(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  FERRY_ASSIGN_OR_RETURN(int64_t dim, norm_dim(n, n.int_or("dim", 0), rank));
  const SymVal start = n.sym_int("start").value_or(SymVal{0, nullptr});
  const SymVal end = n.sym_int("end").value_or(SymVal{std::numeric_limits<int64_t>::max(), nullptr});
  const int64_t step = n.int_or("step", 1);
  FERRY_TRY(n.arg_status());
  if (step <= 0) return invalid_model("slice step must be positive, got " + std::to_string(step));
  // x[:, 0:max] is a no-op that torch.export keeps; so is a full slice.
  if (start.known() && start.value == 0 && end.known() && end.value == std::numeric_limits<int64_t>::max() && step == 1) {
    n.set_output(0, n.emit1(Op::Identity, {x}));
    return Status::Ok();
  }
  n.set_output(0, n.emit1(Op::Slice, {x, n.shape_value({start}, "starts"), n.shape_value({end}, "ends"),
                                      n.const_i64({dim}, "axes"), n.const_i64({step}, "steps")}));
  return Status::Ok();
}

Status import_select(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  FERRY_ASSIGN_OR_RETURN(int64_t dim, norm_dim(n, n.int_or("dim", 0), rank));
  auto index = n.sym_int("index");
  FERRY_TRY(n.arg_status());
  if (!index) return invalid_model("argument 'index' is missing");
  AttrMap a;
  a.set("axis", dim);
  n.set_output(0, n.emit1(Op::Gather, {x, n.scalar_value(*index, "index")}, a));
  return Status::Ok();
}

namespace {
Status split_sizes(TorchNode& n, Value* x, int64_t dim, const std::vector<int64_t>& sizes) {
  AttrMap a;
  a.set("axis", dim);
  Node* s = n.emit(Op::Split, {x, n.const_i64(sizes, "split")}, a, sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) n.set_output(i, s->output(i));
  return Status::Ok();
}
}  // namespace

Status import_split(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  FERRY_ASSIGN_OR_RETURN(int64_t dim, norm_dim(n, n.int_or("dim", 0), rank));
  const int64_t size = n.int_or("split_size", 0);
  FERRY_TRY(n.arg_status());
  const Dim& total = x->shape()[size_t(dim)];
  if (!total.is_static()) return n.unsupported("split along a dim whose size is only known at run time");
  if (size <= 0) return invalid_model("split_size must be positive");
  std::vector<int64_t> sizes;
  for (int64_t left = total.value(); left > 0; left -= size) sizes.push_back(std::min(size, left));
  if (sizes.empty()) sizes.push_back(0);
  return split_sizes(n, x, dim, sizes);
}

Status import_split_with_sizes(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(int64_t rank, rank_of(n, x));
  FERRY_ASSIGN_OR_RETURN(int64_t dim, norm_dim(n, n.int_or("dim", 0), rank));
  std::vector<int64_t> sizes = n.ints_or("split_sizes", {});
  FERRY_TRY(n.arg_status());
  if (sizes.empty()) return invalid_model("split_sizes is empty");
  return split_sizes(n, x, dim, sizes);
}

Status import_arange(TorchNode& n) {
  // arange(end) / arange(start, end) / arange(start, end, step); Scalars may be SymInts.
  auto bound = [&](const char* a, double def, bool* is_int) -> Result<Value*> {
    const Json* j = n.arg(a);
    if (j && j->is_object() && j->contains("as_sym_int")) {
      auto s = n.sym_int(a);
      FERRY_TRY(n.arg_status());
      if (!s) return invalid_model(std::string("argument '") + a + "' is missing");
      return n.scalar_value(*s, a);
    }
    bool i = true;
    const double v = j ? n.scalar(a, &i).value_or(def) : def;
    *is_int = *is_int && i;
    return n.constant(Tensor::scalar<double>(v), a);
  };
  bool all_int = true;
  FERRY_ASSIGN_OR_RETURN(Value* start, bound("start", 0, &all_int));
  FERRY_ASSIGN_OR_RETURN(Value* end, bound("end", 0, &all_int));
  FERRY_ASSIGN_OR_RETURN(Value* step, bound("step", 1, &all_int));
  FERRY_TRY(n.arg_status());
  const DType t = n.dtype_arg("dtype").value_or(all_int ? DType::i64 : DType::f32);
  n.set_output(0, n.emit1(Op::Range, {n.cast(start, t), n.cast(end, t), n.cast(step, t)}));
  return n.arg_status();
}

Status import_full(TorchNode& n) {
  auto size = n.sym_ints("size");
  bool is_int = false;
  auto v = n.scalar("fill_value", &is_int);
  FERRY_TRY(n.arg_status());
  if (!size || !v) return invalid_model("full needs size and fill_value");
  const DType t = n.dtype_arg("dtype").value_or(is_int ? DType::i64 : DType::f32);
  Tensor value = Tensor::empty(t, {1});
  value.set_double(0, *v);
  AttrMap a;
  a.set("value", value);
  n.set_output(0, n.emit1(Op::ConstantOfShape, {n.shape_value(*size, "shape")}, a));
  return n.arg_status();
}

namespace {
Status trilu(TorchNode& n, int64_t upper) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  const int64_t k = n.int_or("diagonal", 0);
  AttrMap a;
  a.set("upper", upper);
  n.set_output(0, n.emit1(Op::Trilu, {x, n.constant(Tensor::scalar<int64_t>(k), "k")}, a));
  return n.arg_status();
}
}  // namespace

Status import_tril(TorchNode& n) { return trilu(n, 0); }
Status import_triu(TorchNode& n) { return trilu(n, 1); }

}  // namespace ferry::torch_import
