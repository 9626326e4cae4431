// ops/topk.cc — TopK (ONNX opset 24): the K largest (or smallest) elements
// along an axis, and their i64 indices.
//
// Equal values keep index order (the lower index comes first), as the spec
// and onnxruntime do. NaN counts as larger than every number (as torch.topk
// and numpy's sort do). With sorted=0 the spec leaves the order undefined;
// this kernel returns the sorted order anyway, which is one valid answer.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

bool topk_accepts_dtype(DType t) { return is_floating(t) || is_integer(t); }

Status check_k_input(DType dtype, const Shape& shape) {
  if (dtype != DType::i64) return invalid_model(std::string("TopK K must be i64, got ") + dtype_name(dtype));
  if (shape.rank_known() && (shape.rank() > 1 || (shape.rank() == 1 && shape[0].is_static() && shape[0].value() != 1)))
    return invalid_model("TopK K must be a 1-D tensor with one element, got shape " + shape.to_string());
  return Status::Ok();
}

Status check_k(int64_t k, const Dim& axis_dim) {
  if (k < 0) return invalid_model("TopK K must be >= 0, got " + std::to_string(k));
  if (axis_dim.is_static() && k > axis_dim.value())
    return invalid_model("TopK K = " + std::to_string(k) + " is larger than the axis size " +
                         std::to_string(axis_dim.value()));
  return Status::Ok();
}

template <class T>
bool topk_is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

/// Sorts the first k indices of one line (stride `inner`) into `idx`.
template <class T>
void top_k_line(const T* line, int64_t n, int64_t inner, int64_t k, bool largest, std::vector<int64_t>& idx) {
  // "u goes before v" on values alone; NaN is the largest value.
  auto first = [&](T u, T v) {
    if (topk_is_nan(u) || topk_is_nan(v)) return largest ? (topk_is_nan(u) && !topk_is_nan(v)) : (!topk_is_nan(u) && topk_is_nan(v));
    return largest ? u > v : u < v;
  };
  idx.resize(size_t(n));
  std::iota(idx.begin(), idx.end(), int64_t(0));
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
    T u = line[a * inner], v = line[b * inner];
    if (first(u, v)) return true;
    if (first(v, u)) return false;
    return a < b;  // equal: lower index first
  });
}

}  // namespace

Status infer_TopK(InferContext& ctx) {
  DType dt = ctx.input_dtype(0);
  if (!topk_accepts_dtype(dt)) return ctx.error(std::string("TopK does not accept ") + dtype_name(dt) + " input");
  FERRY_TRY(check_k_input(ctx.input_dtype(1), ctx.input_shape(1)));
  const Shape& in = ctx.input_shape(0);
  if (!in.rank_known()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    ctx.set_output(1, DType::i64, Shape::unknown_rank());
    return Status::Ok();
  }
  if (in.rank() == 0) return ctx.error("TopK needs an input of rank >= 1, got a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<TopKAttrs>().axis, in.rank()));
  std::vector<Dim> dims = in.dims();
  if (auto k = known_ints(ctx.input_value(1))) {
    if (k->size() != 1) return ctx.error("TopK K must have one element, got " + std::to_string(k->size()));
    FERRY_TRY(check_k(k->front(), in[size_t(axis)]));
    dims[size_t(axis)] = Dim(k->front());
  } else {
    dims[size_t(axis)] = Dim::unknown();
  }
  ctx.set_output(0, dt, Shape(dims));
  ctx.set_output(1, DType::i64, Shape(dims));
  return Status::Ok();
}

Status ref_TopK(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!topk_accepts_dtype(x.dtype())) return ctx.error(std::string("TopK does not accept ") + dtype_name(x.dtype()) + " input");
  const Tensor& k_t = ctx.input(1);
  FERRY_TRY(check_k_input(k_t.dtype(), k_t.shape()));
  if (k_t.numel() != 1) return ctx.error("TopK K must have one element, got " + k_t.type_string());
  if (x.rank() == 0) return ctx.error("TopK needs an input of rank >= 1, got a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<TopKAttrs>().axis, x.rank()));
  const int64_t k = k_t.get_int(0);
  FERRY_TRY(check_k(k, Dim(x.dim(axis))));
  const bool largest = ctx.attrs<TopKAttrs>().largest != 0;

  std::vector<int64_t> out_dims = x.dims();
  out_dims[size_t(axis)] = k;
  Tensor* values = &ctx.output(0);
  if (!values->defined() || values->dims() != out_dims || values->dtype() != x.dtype()) {
    FERRY_ASSIGN_OR_RETURN(values, ctx.allocate_output(0, x.dtype(), out_dims));
  }
  Tensor* indices = &ctx.output(1);
  if (!indices->defined() || indices->dims() != out_dims || indices->dtype() != DType::i64) {
    FERRY_ASSIGN_OR_RETURN(indices, ctx.allocate_output(1, DType::i64, out_dims));
  }
  if (values->numel() == 0) return Status::Ok();  // nothing to select; also no loops over dims like [2^40, 0]
  int64_t outer = 1, inner = 1, n = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);

  // Values are copied bit for bit from the input, so any dtype works alike.
  const size_t esize = dtype_size(x.dtype());
  const uint8_t* src = x.raw();
  uint8_t* dst = values->raw();
  int64_t* out_idx = indices->data<int64_t>();
  auto run = [&](const auto* keys) {
    std::vector<int64_t> idx;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        top_k_line(keys + o * n * inner + i, n, inner, k, largest, idx);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t from = o * n * inner + idx[size_t(j)] * inner + i;
          const int64_t to = o * k * inner + j * inner + i;
          out_idx[to] = idx[size_t(j)];
          std::memcpy(dst + size_t(to) * esize, src + size_t(from) * esize, esize);
        }
      }
  };
  if (x.dtype() == DType::f16 || x.dtype() == DType::bf16) {
    std::vector<double> keys = x.to_double_vector();  // exact for 16-bit floats
    run(keys.data());
  } else {
    dispatch_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>) run(x.data<T>());
    });
  }
  return Status::Ok();
}

}  // namespace ferry
