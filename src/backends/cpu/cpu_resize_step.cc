// backends/cpu/cpu_resize_step.cc — Resize nearest by whole factors (the cases of
// native/resize.h's resize_nearest_accepts) on a channels-last input, as one strided copy
// into a channels-last output: y[n, i*kh + a, j*kw + b, :] = x[n, i, j, :] (runs of C floats).
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
  const auto xs = onednn::dense_strides(x.layout);
  if (!xs || (*xs)[1] != 1) return unsupported("resize: a layout other than nhwc");
  std::vector<const Tensor*> known;
  std::vector<std::vector<int64_t>> dims;
  for (const onednn::Operand& o : r.ops) known.push_back(o.constant), dims.push_back(o.dims);
  if (!resize_nearest_accepts(r.node, known, dims)) return unsupported("resize: not nearest by whole factors");
  const std::vector<int64_t>& xd = x.dims;
  const std::vector<int64_t>& yd = r.out_dims;
  if (yd[0] != xd[0] || yd[1] != xd[1] || yd[2] % xd[2] || yd[3] % xd[3]) return unsupported("resize: output dims");
  const int64_t kh = yd[2] / xd[2], kw = yd[3] / xd[3], C = xd[1];
  const dnnl::memory::desc out(dnnl::memory::dims(yd.begin(), yd.end()), dnnl::memory::data_type::f32,
                               dnnl::memory::format_tag::acdb);
  const int64_t yw = C, yh = yd[3] * C, yn = yd[2] * yh;
  // Axes (n, i, a, j, b, c) in the output's memory order; a and b read the same source.
  const std::vector<int64_t> d = {xd[0], xd[2], kh, xd[3], kw, C};
  const std::vector<int64_t> src = {(*xs)[0], (*xs)[2], 0, (*xs)[3], 0, 1};
  const std::vector<int64_t> dst = {yn, kh * yh, yh, kw * yw, yw, 1};
  onednn::Made made;
  made.step = make_strided_copy_step(d, src, dst, sizeof(float), "resize_nearest_strided_copy_acdb");
  if (!made.step) return unsupported("resize: strided copy");
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = x.layout;
  made.out = out;
  return made;
}

}  // namespace ferry
