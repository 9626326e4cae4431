// ops/depth_space.cc — DepthToSpace and SpaceToDepth on NCHW, block size b.
//
// Both are a reshape to 6-D, a transpose, and a reshape back:
//   DepthToSpace DCR: [N,b,b,C/b²,H,W] -> perm [0,3,4,1,5,2] -> [N,C/b²,H*b,W*b]
//   DepthToSpace CRD: [N,C/b²,b,b,H,W] -> perm [0,1,4,2,5,3] -> [N,C/b²,H*b,W*b]
//   SpaceToDepth DCR: [N,C,H/b,b,W/b,b] -> perm [0,3,5,1,2,4] -> [N,C*b²,H/b,W/b]
//   SpaceToDepth CRD: [N,C,H/b,b,W/b,b] -> perm [0,1,3,5,2,4] -> [N,C*b²,H/b,W/b]  (opset 28)
#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

Result<int64_t> block_size(const NodeContext& ctx) {
  const int64_t b = ctx.node().op() == Op::DepthToSpace ? ctx.attrs<DepthToSpaceAttrs>().blocksize
                                                        : ctx.attrs<SpaceToDepthAttrs>().blocksize;
  if (b < 1 || b > (int64_t(1) << 20)) return ctx.error("blocksize " + std::to_string(b) + " must be positive");
  return b;
}

Result<bool> is_dcr(const NodeContext& ctx) {
  const std::string& m = ctx.node().op() == Op::DepthToSpace ? ctx.attrs<DepthToSpaceAttrs>().mode
                                                             : ctx.attrs<SpaceToDepthAttrs>().mode;
  if (m != "DCR" && m != "CRD") return ctx.error("mode must be DCR or CRD, got '" + m + "'");
  return m == "DCR";
}

/// `d / by` when static (error when not divisible), else unknown.
Result<Dim> dim_div(const NodeContext& ctx, const Dim& d, int64_t by, const char* what) {
  if (!d.is_static()) return by == 1 ? d : Dim::unknown();
  if (d.value() % by != 0)
    return ctx.error(std::string(what) + " " + std::to_string(d.value()) + " is not divisible by " + std::to_string(by));
  return Dim(d.value() / by);
}

Status check_rank4(const NodeContext& ctx, const Shape& s) {
  if (s.rank_known() && s.rank() != 4) return ctx.error("input must be 4-D (NCHW), got " + s.to_string());
  return Status::Ok();
}

/// Copies x viewed as `in6` dims, transposed by `perm`, into y (row-major).
void permute6(const Tensor& x, Tensor& y, const std::vector<int64_t>& in6, const std::vector<int64_t>& perm) {
  std::vector<int64_t> s = strides_of(in6), dims, strides;
  for (int64_t p : perm) {
    dims.push_back(in6[size_t(p)]);
    strides.push_back(s[size_t(p)]);
  }
  strided_copy(x.raw(), y.raw(), dtype_size(x.dtype()), dims, strides, 0);
}

}  // namespace

Status infer_DepthToSpace(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(int64_t b, block_size(ctx));
  FERRY_TRY(is_dcr(ctx).status());
  const Shape& in = ctx.input_shape(0);
  FERRY_TRY(check_rank4(ctx, in));
  if (!in.rank_known()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape(std::vector<Dim>(4)));
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(Dim c, dim_div(ctx, in[1], b * b, "channels"));
  ctx.set_output(0, ctx.input_dtype(0), Shape({in[0], c, dim_mul(in[2], b), dim_mul(in[3], b)}));
  return Status::Ok();
}

Status ref_DepthToSpace(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(int64_t b, block_size(ctx));
  FERRY_ASSIGN_OR_RETURN(bool dcr, is_dcr(ctx));
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_rank4(ctx, x.shape()));
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (c % (b * b) != 0)
    return ctx.error("channels " + std::to_string(c) + " is not divisible by " + std::to_string(b * b));
  const int64_t co = c / (b * b);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), {n, co, h * b, w * b}));
  if (dcr) permute6(x, *y, {n, b, b, co, h, w}, {0, 3, 4, 1, 5, 2});
  else permute6(x, *y, {n, co, b, b, h, w}, {0, 1, 4, 2, 5, 3});
  return Status::Ok();
}

Status infer_SpaceToDepth(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(int64_t b, block_size(ctx));
  FERRY_TRY(is_dcr(ctx).status());
  const Shape& in = ctx.input_shape(0);
  FERRY_TRY(check_rank4(ctx, in));
  if (!in.rank_known()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape(std::vector<Dim>(4)));
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(Dim h, dim_div(ctx, in[2], b, "height"));
  FERRY_ASSIGN_OR_RETURN(Dim w, dim_div(ctx, in[3], b, "width"));
  ctx.set_output(0, ctx.input_dtype(0), Shape({in[0], dim_mul(in[1], b * b), h, w}));
  return Status::Ok();
}

Status ref_SpaceToDepth(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(int64_t b, block_size(ctx));
  FERRY_ASSIGN_OR_RETURN(bool dcr, is_dcr(ctx));
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_rank4(ctx, x.shape()));
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (h % b != 0 || w % b != 0)
    return ctx.error("height " + std::to_string(h) + " and width " + std::to_string(w) + " must be divisible by " +
                     std::to_string(b));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), {n, c * b * b, h / b, w / b}));
  permute6(x, *y, {n, c, h / b, b, w / b, b},
           dcr ? std::vector<int64_t>{0, 3, 5, 1, 2, 4} : std::vector<int64_t>{0, 1, 3, 5, 2, 4});
  return Status::Ok();
}

}  // namespace ferry
