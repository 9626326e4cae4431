// backends/cpu/cpu_resize_step.cc — Resize nearest by whole factors (the cases of
// native/resize.h's resize_nearest_accepts) on a channels-last or channel-blocked (nChw8c /
// 16c) input, as one strided copy into the same layout: y[n, i*kh + a, j*kw + b, :] =
// x[n, i, j, :] (runs of C floats, or of one channel block).
// YOLOv8's neck upsamples channels-last conv outputs by 2 for channels-last convs and
// Concats; on the kernel table's (plain) Resize that took a reorder to plain and one back.
#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/resize.h"
#include "backends/cpu/native/strided_copy.h"
#include "backends/cpu/onednn/onednn_common.h"

namespace ferry {

Result<onednn::Made> resize_nearest_step(const StepRequest& r) {
  const onednn::Operand& x = r.ops[0];
  if (x.constant || x.dtype != DType::f32 || x.dims.size() != 4 || r.out_dims.size() != 4)
    return unsupported("resize: a computed f32 4-D input");
  if (onednn::is_plain(x.layout)) return unsupported("resize: plain input (the kernel table's Resize)");
  const int64_t block = channel_block_4d(x.layout);
  const auto xs = onednn::dense_strides(x.layout);
  if (!block && (!xs || (*xs)[1] != 1)) return unsupported("resize: a layout other than nhwc, nChw8c, nChw16c");
  std::vector<const Tensor*> known;
  std::vector<std::vector<int64_t>> dims;
  for (const onednn::Operand& o : r.ops) known.push_back(o.constant), dims.push_back(o.dims);
  if (!resize_nearest_accepts(r.node, known, dims)) return unsupported("resize: not nearest by whole factors");
  const std::vector<int64_t>& xd = x.dims;
  const std::vector<int64_t>& yd = r.out_dims;
  if (yd[0] != xd[0] || yd[1] != xd[1] || yd[2] % xd[2] || yd[3] % xd[3]) return unsupported("resize: output dims");
  const int64_t kh = yd[2] / xd[2], kw = yd[3] / xd[3], C = xd[1];
  onednn::Made made;
  if (block) {
    // Axes (n, channel block, i, a, j, b, lane) in the output's memory order.
    const int64_t H = xd[2], W = xd[3], OH = yd[2], OW = yd[3];
    const std::vector<int64_t> d = {xd[0], C / block, H, kh, W, kw, block};
    const std::vector<int64_t> src = {C * H * W, H * W * block, W * block, 0, block, 0, 1};
    const std::vector<int64_t> dst = {C * OH * OW, OH * OW * block, kh * OW * block, OW * block, kw * block, block, 1};
    made.out = channel_blocked_desc(yd, block);
    made.step = make_strided_copy_step(d, src, dst, sizeof(float),
                                       "resize_nearest_strided_copy_" + onednn::layout_name(made.out));
  } else {
    const int64_t yw = C, yh = yd[3] * C, yn = yd[2] * yh;
    // Axes (n, i, a, j, b, c) in the output's memory order; a and b read the same source.
    const std::vector<int64_t> d = {xd[0], xd[2], kh, xd[3], kw, C};
    const std::vector<int64_t> src = {(*xs)[0], (*xs)[2], 0, (*xs)[3], 0, 1};
    const std::vector<int64_t> dst = {yn, kh * yh, yh, kw * yw, yw, 1};
    made.out = dnnl::memory::desc(dnnl::memory::dims(yd.begin(), yd.end()), dnnl::memory::data_type::f32,
                                  dnnl::memory::format_tag::acdb);
    made.step = make_strided_copy_step(d, src, dst, sizeof(float), "resize_nearest_strided_copy_acdb");
  }
  if (!made.step) return unsupported("resize: strided copy");
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = x.layout;
  return made;
}

}  // namespace ferry
