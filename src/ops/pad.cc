// ops/pad.cc — Pad(data, pads, constant_value?, axes?), modes constant reflect edge wrap.
//
// pads = [b_1..b_n, e_1..e_n] for the listed axes (all axes by default);
// out.dims[a] = dims[a] + b + e. Negative pads crop first (as onnxruntime
// does), then the remaining positive pads are filled from the cropped axis of
// length n, for an output position j relative to its start:
//   constant: value            edge: x[clamp(j, 0, n-1)]
//   wrap:     x[j mod n]       reflect: x[m] with m = j mirrored on 0 and n-1
//                              (period 2(n-1), as numpy.pad; n == 1 repeats x[0])
#include <cstring>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

enum class PadMode { constant, reflect, edge, wrap };

Result<PadMode> parse_mode(const NodeContext& ctx) {
  const std::string& m = ctx.attrs<PadAttrs>().mode;
  if (m == "constant") return PadMode::constant;
  if (m == "reflect") return PadMode::reflect;
  if (m == "edge") return PadMode::edge;
  if (m == "wrap") return PadMode::wrap;
  return ctx.error("unknown pad mode '" + m + "' (expected constant, reflect, edge or wrap)");
}

/// Per-axis (begin, end) pads for every axis of a rank-`rank` tensor.
Result<std::vector<std::pair<int64_t, int64_t>>> pads_per_axis(const NodeContext& ctx, const std::vector<int64_t>& pads,
                                                               const std::optional<std::vector<int64_t>>& axes,
                                                               int64_t rank) {
  std::vector<int64_t> ax;
  if (axes) {
    FERRY_ASSIGN_OR_RETURN(ax, normalize_axes(*axes, rank));
  } else {
    for (int64_t i = 0; i < rank; ++i) ax.push_back(i);
  }
  if (pads.size() != 2 * ax.size())
    return ctx.error("pads " + ints_to_string(pads) + " has " + std::to_string(pads.size()) + " values, expected " +
                     std::to_string(2 * ax.size()) + " (begin and end for " + std::to_string(ax.size()) + " axes)");
  std::vector<std::pair<int64_t, int64_t>> out(size_t(rank), {0, 0});
  for (size_t i = 0; i < ax.size(); ++i) {
    int64_t b = pads[i], e = pads[i + ax.size()];
    if (b < -kMaxDim || b > kMaxDim || e < -kMaxDim || e > kMaxDim)
      return ctx.error("pads " + ints_to_string(pads) + " has an absurd value");
    out[size_t(ax[i])] = {b, e};
  }
  return out;
}

Result<int64_t> padded_dim(const NodeContext& ctx, int64_t d, std::pair<int64_t, int64_t> p, size_t axis) {
  int64_t out = d + p.first + p.second;
  if (out < 0)
    return ctx.error("pads (" + std::to_string(p.first) + ", " + std::to_string(p.second) + ") crop axis " +
                     std::to_string(axis) + " of size " + std::to_string(d) + " below zero");
  if (out > kMaxDim) return ctx.error("padded axis " + std::to_string(axis) + " is too large");
  return out;
}

/// Source index along one axis for each output position, or -1 for the constant.
Result<std::vector<int64_t>> axis_map(const NodeContext& ctx, PadMode mode, int64_t d, std::pair<int64_t, int64_t> p,
                                      size_t axis) {
  FERRY_ASSIGN_OR_RETURN(int64_t out_d, padded_dim(ctx, d, p, axis));
  const int64_t crop = std::max<int64_t>(-p.first, 0);
  const int64_t n = d - crop - std::max<int64_t>(-p.second, 0);  // cropped length
  const int64_t lead = std::max<int64_t>(p.first, 0);
  if (n <= 0 && mode != PadMode::constant && out_d > 0)
    return ctx.error("cannot pad an empty axis " + std::to_string(axis) + " in " + ctx.attrs<PadAttrs>().mode + " mode");
  std::vector<int64_t> map(static_cast<size_t>(out_d));
  for (int64_t o = 0; o < out_d; ++o) {
    int64_t j = o - lead;
    if (j < 0 || j >= n) {
      switch (mode) {
        case PadMode::constant: map[size_t(o)] = -1; continue;
        case PadMode::edge: j = j < 0 ? 0 : n - 1; break;
        case PadMode::wrap: j = ((j % n) + n) % n; break;
        case PadMode::reflect:
          if (n == 1) {
            j = 0;
          } else {
            const int64_t period = 2 * (n - 1);
            j = ((j % period) + period) % period;
            if (j >= n) j = period - j;
          }
          break;
      }
    }
    map[size_t(o)] = crop + j;
  }
  return map;
}

}  // namespace

Status infer_Pad(InferContext& ctx) {
  FERRY_TRY(parse_mode(ctx).status());
  FERRY_TRY(check_integer_input(ctx, 1, "pads"));
  FERRY_TRY(check_integer_input(ctx, 3, "axes"));
  DType dt = ctx.input_dtype(0);
  if (ctx.has_input(2) && ctx.input_dtype(2) != dt)
    return ctx.error(std::string("constant_value is ") + dtype_name(ctx.input_dtype(2)) + " but data is " + dtype_name(dt));
  const Shape& in = ctx.input_shape(0);
  if (!in.rank_known()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  auto pads = known_ints(ctx.input_value(1));
  auto axes = known_ints(ctx.input_value(3));
  std::vector<Dim> out = in.dims();
  if (ctx.has_input(3) && !axes) {
    ctx.set_output(0, dt, Shape(std::vector<Dim>(out.size())));
    return Status::Ok();
  }
  if (!pads) {
    // Pad amounts unknown: the padded axes lose their size.
    if (axes) {
      FERRY_ASSIGN_OR_RETURN(auto ax, normalize_axes(*axes, in.rank()));
      for (int64_t a : ax) out[size_t(a)] = Dim::unknown();
    } else {
      out.assign(out.size(), Dim::unknown());
    }
    ctx.set_output(0, dt, Shape(std::move(out)));
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(auto per_axis, pads_per_axis(ctx, *pads, axes, in.rank()));
  for (size_t a = 0; a < out.size(); ++a) {
    auto p = per_axis[a];
    if (out[a].is_static()) {
      FERRY_ASSIGN_OR_RETURN(int64_t d, padded_dim(ctx, out[a].value(), p, a));
      out[a] = d;
    } else if (p.first + p.second != 0) {
      out[a] = Dim::unknown();
    }
  }
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_Pad(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(PadMode mode, parse_mode(ctx));
  const Tensor& x = ctx.input(0);
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_input(3)) axes = ctx.input(3).to_int_vector();
  FERRY_ASSIGN_OR_RETURN(auto per_axis, pads_per_axis(ctx, ctx.input(1).to_int_vector(), axes, x.rank()));
  const size_t esz = dtype_size(x.dtype());
  std::vector<uint8_t> value(esz, 0);
  if (ctx.has_input(2) && mode == PadMode::constant) {
    const Tensor& cv = ctx.input(2);
    if (cv.dtype() != x.dtype() || cv.numel() != 1)
      return ctx.error("constant_value must be one " + std::string(dtype_name(x.dtype())) + ", got " + cv.type_string());
    std::memcpy(value.data(), cv.raw(), esz);
  }
  const size_t r = size_t(x.rank());
  std::vector<int64_t> dims(r);
  for (size_t a = 0; a < r; ++a) {
    FERRY_ASSIGN_OR_RETURN(dims[a], padded_dim(ctx, x.dims()[a], per_axis[a], a));
  }
  // Allocate first: absurd sizes fail here, before the index maps are built.
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), dims));
  // Nothing to write: an empty output may still have one huge axis (pads near the dim limit
  // beside a 0), whose index map alone would not fit in memory (found by onnx_load_fuzz).
  if (y->numel() == 0) return Status::Ok();
  std::vector<std::vector<int64_t>> maps(r);
  for (size_t a = 0; a < r; ++a) {
    FERRY_ASSIGN_OR_RETURN(maps[a], axis_map(ctx, mode, x.dims()[a], per_axis[a], a));
  }
  const std::vector<int64_t> strides = strides_of(x.dims());
  std::vector<int64_t> idx(r, 0);
  uint8_t* dst = y->raw();
  for (int64_t o = 0; o < y->numel(); ++o, dst += esz) {
    int64_t src = 0;
    bool fill = false;
    for (size_t a = 0; a < r && !fill; ++a) {
      int64_t m = maps[a][size_t(idx[a])];
      fill = m < 0;
      src += m * strides[a];
    }
    std::memcpy(dst, fill ? value.data() : x.raw() + size_t(src) * esz, esz);
    for (size_t a = r; a-- > 0;) {
      if (++idx[a] < dims[a]) break;
      idx[a] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace ferry
