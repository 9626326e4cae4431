// ops/col2im.cc — Col2Im (ONNX opset 18): sums sliding blocks back into an image
// (the inverse layout of im2col; torch.nn.Fold for any spatial rank).
//
//   input [N, C * prod(block), L], image_shape (I1..Ir), block_shape (K1..Kr) -> output [N, C, I1..Ir]
//
// With blocks per axis B_i = (I_i + pad_begin_i + pad_end_i - (dilation_i (K_i - 1) + 1)) / stride_i + 1
// and L = prod(B_i):
//   output[n, c, p] += input[n, c * prod(K) + k, b]   for every kernel offset k and block b,
//   p_i = b_i * stride_i - pad_begin_i + k_i * dilation_i, when p lies inside the image.
// Offsets k and blocks b are row-major multi-indices. Floats accumulate in f64;
// integers wrap like the ONNX reference's numpy. The output shape depends on
// the value of image_shape; inference knows only its rank unless it is a constant.
#include <cstring>
#include <type_traits>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

struct Geometry {
  std::vector<int64_t> image, block, strides, dilations, pads, blocks;  ///< pads: r begins then r ends
  int64_t kernel = 1, num_blocks = 1;
};

/// The attribute `name` with r values, or `fill` repeated when absent.
Result<std::vector<int64_t>> attr_or(const std::optional<std::vector<int64_t>>& attr, const char* name, size_t count,
                                     int64_t fill) {
  if (!attr) return std::vector<int64_t>(count, fill);
  const std::vector<int64_t>& v = *attr;
  if (v.size() != count)
    return invalid_model(std::string("Col2Im ") + name + " has " + std::to_string(v.size()) + " values, expected " +
                         std::to_string(count));
  return v;
}

Result<Geometry> geometry(const NodeContext& ctx, std::vector<int64_t> image, std::vector<int64_t> block) {
  Geometry g;
  const size_t r = image.size();
  if (r == 0) return ctx.error("Col2Im image_shape must have at least one element");
  if (block.size() != r)
    return ctx.error("Col2Im image_shape " + ints_to_string(image) + " and block_shape " + ints_to_string(block) +
                     " differ in length");
  const Col2ImAttrs& a = ctx.attrs<Col2ImAttrs>();
  FERRY_ASSIGN_OR_RETURN(g.strides, attr_or(a.strides, "strides", r, 1));
  FERRY_ASSIGN_OR_RETURN(g.dilations, attr_or(a.dilations, "dilations", r, 1));
  FERRY_ASSIGN_OR_RETURN(g.pads, attr_or(a.pads, "pads", 2 * r, 0));
  for (size_t i = 0; i < r; ++i) {
    if (image[i] < 0 || image[i] > kMaxDim || block[i] < 1 || block[i] > kMaxDim || g.strides[i] < 1 ||
        g.dilations[i] < 1 || g.pads[i] < 0 || g.pads[i + r] < 0 || g.strides[i] > kMaxDim ||
        g.dilations[i] > kMaxDim || g.pads[i] > kMaxDim || g.pads[i + r] > kMaxDim)
      return ctx.error("Col2Im axis " + std::to_string(i) + ": image " + std::to_string(image[i]) + ", block " +
                       std::to_string(block[i]) + ", stride " + std::to_string(g.strides[i]) + ", dilation " +
                       std::to_string(g.dilations[i]) + " or pads out of range");
    const int64_t span = mul_sat(g.dilations[i], block[i] - 1) + 1;
    const int64_t room = image[i] + g.pads[i] + g.pads[i + r] - span;
    if (room < 0)
      return ctx.error("Col2Im axis " + std::to_string(i) + ": a block of extent " + std::to_string(span) +
                       " does not fit the padded image of " + std::to_string(image[i] + g.pads[i] + g.pads[i + r]));
    g.blocks.push_back(room / g.strides[i] + 1);
    g.kernel = mul_sat(g.kernel, block[i]);
    g.num_blocks = mul_sat(g.num_blocks, g.blocks.back());
  }
  g.image = std::move(image);
  g.block = std::move(block);
  return g;
}

Status check_shape_input(const NodeContext& ctx, DType dt, const Shape& s, const char* what) {
  if (dt != DType::i64) return ctx.error(std::string("Col2Im ") + what + " must be i64, got " + dtype_name(dt));
  if (s.rank_known() && s.rank() != 1) return ctx.error(std::string("Col2Im ") + what + " must be 1-D, got " + s.to_string());
  return Status::Ok();
}

/// Calls fn(image offset, column offset) for every kernel offset k and block b that lands inside the image.
template <class Fn>
void for_each_tap(const Geometry& g, Fn&& fn) {
  const size_t r = g.image.size();
  std::vector<int64_t> k(r, 0), b(r, 0);
  for (int64_t kf = 0; kf < g.kernel; ++kf) {
    std::fill(b.begin(), b.end(), 0);
    for (int64_t bf = 0; bf < g.num_blocks; ++bf) {
      int64_t p = 0;
      bool inside = true;
      for (size_t i = 0; i < r && inside; ++i) {
        const int64_t pi = b[i] * g.strides[i] - g.pads[i] + k[i] * g.dilations[i];
        inside = pi >= 0 && pi < g.image[i];
        p = p * g.image[i] + pi;
      }
      if (inside) fn(p, kf * g.num_blocks + bf);
      for (size_t i = r; i-- > 0 && ++b[i] == g.blocks[i];) b[i] = 0;
    }
    for (size_t i = r; i-- > 0 && ++k[i] == g.block[i];) k[i] = 0;
  }
}

}  // namespace

Status infer_Col2Im(InferContext& ctx) {
  const DType dt = ctx.input_dtype(0);
  if (!is_floating(dt) && !is_integer(dt)) return ctx.error(std::string("Col2Im does not accept ") + dtype_name(dt) + " input");
  FERRY_TRY(check_shape_input(ctx, ctx.input_dtype(1), ctx.input_shape(1), "image_shape"));
  FERRY_TRY(check_shape_input(ctx, ctx.input_dtype(2), ctx.input_shape(2), "block_shape"));
  const Shape& in = ctx.input_shape(0);
  if (in.rank_known() && in.rank() != 3) return ctx.error("Col2Im input must be [N, C * prod(block_shape), L], got " + in.to_string());
  std::optional<int64_t> r = static_length(ctx, 1);
  if (!r) r = static_length(ctx, 2);
  if (!r) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  std::vector<Dim> dims(size_t(*r + 2));
  if (in.rank_known()) dims[0] = in[0];
  auto image = known_ints(ctx.input_value(1));
  auto block = known_ints(ctx.input_value(2));
  if (image)
    for (int64_t i = 0; i < *r && size_t(i) < image->size(); ++i) dims[size_t(i + 2)] = Dim((*image)[size_t(i)]);
  if (image && block) {
    FERRY_ASSIGN_OR_RETURN(Geometry g, geometry(ctx, *image, *block));
    if (in.rank_known() && in[1].is_static()) {
      if (in[1].value() % g.kernel != 0)
        return ctx.error("Col2Im input " + in.to_string() + ": dim 1 is not a multiple of prod(block_shape) = " +
                         std::to_string(g.kernel));
      dims[1] = Dim(in[1].value() / g.kernel);
    }
    if (in.rank_known() && in[2].is_static() && in[2].value() != g.num_blocks)
      return ctx.error("Col2Im input " + in.to_string() + ": dim 2 must be the number of blocks, " +
                       std::to_string(g.num_blocks));
  }
  ctx.set_output(0, dt, Shape(dims));
  return Status::Ok();
}

Status ref_Col2Im(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!is_floating(x.dtype()) && !is_integer(x.dtype()))
    return ctx.error(std::string("Col2Im does not accept ") + dtype_name(x.dtype()) + " input");
  FERRY_TRY(check_shape_input(ctx, ctx.input(1).dtype(), ctx.input(1).shape(), "image_shape"));
  FERRY_TRY(check_shape_input(ctx, ctx.input(2).dtype(), ctx.input(2).shape(), "block_shape"));
  if (x.rank() != 3) return ctx.error("Col2Im input must be [N, C * prod(block_shape), L], got " + x.type_string());
  FERRY_ASSIGN_OR_RETURN(Geometry g, geometry(ctx, ctx.input(1).to_int_vector(), ctx.input(2).to_int_vector()));
  if (x.dim(1) % g.kernel != 0 || x.dim(2) != g.num_blocks)
    return ctx.error("Col2Im input " + x.type_string() + " does not fit block_shape " + ints_to_string(g.block) +
                     " with " + std::to_string(g.num_blocks) + " blocks");
  const int64_t batch = x.dim(0), channels = x.dim(1) / g.kernel;
  std::vector<int64_t> out_dims{batch, channels};
  out_dims.insert(out_dims.end(), g.image.begin(), g.image.end());
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), out_dims));
  if (y->numel() == 0 || x.numel() == 0) return Status::Ok();
  const int64_t plane = y->numel() / (batch * channels), cols = g.kernel * g.num_blocks;

  if (is_floating(x.dtype())) {
    std::vector<double> acc(static_cast<size_t>(plane));
    for (int64_t nc = 0; nc < batch * channels; ++nc) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for_each_tap(g, [&](int64_t p, int64_t col) { acc[size_t(p)] += x.get_double(nc * cols + col); });
      for (int64_t p = 0; p < plane; ++p) y->set_double(nc * plane + p, acc[size_t(p)]);
    }
    return Status::Ok();
  }
  std::memset(y->raw(), 0, y->nbytes());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      using U = std::make_unsigned_t<T>;  // wrapping sums, no signed overflow
      const T* in = x.data<T>();
      T* out = y->data<T>();
      for (int64_t nc = 0; nc < batch * channels; ++nc)
        for_each_tap(g, [&](int64_t p, int64_t col) {
          T& o = out[nc * plane + p];
          o = T(U(U(o) + U(in[nc * cols + col])));
        });
    }
  });
  return Status::Ok();
}

}  // namespace ferry
