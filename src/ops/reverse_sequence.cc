// ops/reverse_sequence.cc — ReverseSequence (ONNX opset 10).
//
//   ReverseSequence(x, l)   for each batch b, the first l[b] steps along time_axis reversed
#include <cstring>

#include "ops/movement_util.h"
#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {

Status infer_ReverseSequence(InferContext& ctx) {
  const DType l = ctx.input_dtype(1);
  if (l != DType::i64 && l != DType::i32) return ctx.error("ReverseSequence: sequence_lens must be i64");
  const ReverseSequenceAttrs& a = ctx.attrs<ReverseSequenceAttrs>();
  const int64_t b = a.batch_axis, t = a.time_axis;
  if (!((b == 0 && t == 1) || (b == 1 && t == 0)))
    return ctx.error("ReverseSequence: batch_axis and time_axis must be 0 and 1 in some order");
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

Status ref_ReverseSequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& lens = ctx.input(1);
  const ReverseSequenceAttrs& a = ctx.attrs<ReverseSequenceAttrs>();
  const int64_t b_axis = a.batch_axis, t_axis = a.time_axis;
  if (x.rank() < 2 || !((b_axis == 0 && t_axis == 1) || (b_axis == 1 && t_axis == 0)))
    return ctx.error("ReverseSequence: needs rank >= 2 and batch/time axes 0 and 1");
  const int64_t batch = x.dim(b_axis), time = x.dim(t_axis);
  if (lens.numel() != batch) return ctx.error("ReverseSequence: sequence_lens must have one entry per batch");
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), x.dims()));
  int64_t inner = 1;
  for (int64_t d = 2; d < x.rank(); ++d) inner *= x.dim(d);
  const size_t w = dtype_size(x.dtype());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens.get_int(b);
    if (len < 0 || len > time) return ctx.error("ReverseSequence: sequence length " + std::to_string(len) + " is out of range");
    for (int64_t t = 0; t < time; ++t) {
      const int64_t src_t = t < len ? len - 1 - t : t;
      auto offset = [&](int64_t tt) { return (b_axis == 0 ? b * time + tt : tt * batch + b) * inner; };
      std::memcpy(y->raw() + size_t(offset(t)) * w, x.raw() + size_t(offset(src_t)) * w, size_t(inner) * w);
    }
  }
  return Status::Ok();
}

}  // namespace ferry
