// backends/cpu/cpu_depth_to_space_step.cc — DepthToSpace (DCR / CRD) as one strided copy
// over a dense layout of its input (plain or channels-last), without a reorder around it.
//
//   y[n, oc, i*s + a, j*s + b] = x[n, c, i, j],  c = (a*s + b)*OC + oc (DCR) or oc*s*s + a*s + b (CRD)
//
// The output is channels-last when the input is (a DCR shuffle of a 1x1 Conv's nhwc output,
// passes/lower_conv_transpose.cc: each output pixel's OC channels are one contiguous run of
// the input), else plain. A channel-blocked input (nChw8c / nChw16c, no padding) in DCR with
// OC a multiple of the block stays blocked: output channel block ob of pixel (i*s+a, j*s+b)
// is input block (a*s + b)*OC/B + ob of pixel (i, j), a contiguous run of B. Other blocked
// inputs are read as channels-last (one reorder).
// The copy walks the output in its memory order; when that order's innermost run is short
// (OC < 16), the longest axis goes innermost instead (rows of W, not of OC).
#include <algorithm>
#include <numeric>

#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/strided_copy.h"
#include "backends/cpu/onednn/onednn_common.h"
#include "ir/op_attrs.h"

namespace ferry {
namespace {

struct D2sAxis {
  int64_t extent, src, dst;
};

/// The axes (n, oc, i, a, j, b) in the output's memory order, size-1 axes dropped.
std::vector<D2sAxis> d2s_axes(const std::vector<int64_t>& xd, const std::vector<int64_t>& xs,
                              const std::vector<int64_t>& ys, int64_t s, bool dcr) {
  const int64_t oc = xd[1] / (s * s), sc = xs[1];
  const int64_t oc_src = dcr ? sc : s * s * sc, a_src = dcr ? s * oc * sc : s * sc, b_src = dcr ? oc * sc : sc;
  std::vector<D2sAxis> axes = {{xd[0], xs[0], ys[0]},     {oc, oc_src, ys[1]},  {xd[2], xs[2], s * ys[2]},
                               {s, a_src, ys[2]},         {xd[3], xs[3], s * ys[3]}, {s, b_src, ys[3]}};
  axes.erase(std::remove_if(axes.begin(), axes.end(), [](const D2sAxis& x) { return x.extent == 1; }), axes.end());
  if (axes.empty()) axes.push_back({1, 1, 1});
  std::stable_sort(axes.begin(), axes.end(), [](const D2sAxis& l, const D2sAxis& r) { return l.dst > r.dst; });
  if (axes.back().extent < 16) {
    auto longest = std::max_element(axes.begin(), axes.end(),
                                    [](const D2sAxis& l, const D2sAxis& r) { return l.extent < r.extent; });
    D2sAxis inner = *longest;
    axes.erase(longest);
    axes.push_back(inner);
  }
  return axes;
}

/// The channel block of `md` (nChw8c: 8) when it is one unpadded block of dim 1 of a 4-D
/// layout, else 0; `outer` gets the strides of the outer index per dim (in elements).
int64_t d2s_channel_block(const dnnl::memory::desc& md, std::vector<int64_t>* outer) {
  const dnnl_memory_desc_t& c = md.data;
  const auto& b = c.format_desc.blocking;
  if (c.format_kind != dnnl_blocked || c.ndims != 4 || b.inner_nblks != 1 || b.inner_idxs[0] != 1 || c.offset0 != 0)
    return 0;
  for (int i = 0; i < 4; ++i)
    if (c.padded_dims[i] != c.dims[i]) return 0;
  outer->assign(b.strides, b.strides + 4);
  return b.inner_blks[0];
}

/// The axes of a DCR shuffle of a channel-blocked input (block `blk`, outer strides `xs`)
/// into the same blocked layout: (n, ob, i, a, j, b, lane), output memory order.
std::vector<D2sAxis> d2s_blocked_axes(const std::vector<int64_t>& xd, const std::vector<int64_t>& xs, int64_t blk,
                                      int64_t s) {
  const int64_t ob = xd[1] / (s * s) / blk, hs = xd[2] * s, ws = xd[3] * s;
  const int64_t y_w = blk, y_h = ws * blk, y_ob = hs * ws * blk, y_n = ob * y_ob;
  std::vector<D2sAxis> axes = {{xd[0], xs[0], y_n},      {ob, xs[1], y_ob},       {xd[2], xs[2], s * y_h},
                               {s, s * ob * xs[1], y_h}, {xd[3], xs[3], s * y_w}, {s, ob * xs[1], y_w},
                               {blk, 1, 1}};
  axes.erase(std::remove_if(axes.begin(), axes.end(), [](const D2sAxis& x) { return x.extent == 1; }), axes.end());
  return axes;
}

std::vector<int64_t> d2s_strides_of(const dnnl::memory::desc& md) {
  return *onednn::dense_strides(md);
}

}  // namespace

Result<onednn::Made> depth_to_space_step(const StepRequest& r) {
  const onednn::Operand& x = r.ops[0];
  const DepthToSpaceAttrs& a = r.node.attrs<DepthToSpaceAttrs>();
  const int64_t s = a.blocksize;
  if (x.constant || x.dims.size() != 4 || r.out_dims.size() != 4) return unsupported("depth_to_space: 4-D computed input");
  if (a.mode != "DCR" && a.mode != "CRD") return unsupported("depth_to_space: mode");
  if (s < 1 || x.dims[1] % (s * s) != 0 || onednn::numel(x.dims) == 0) return unsupported("depth_to_space: shape");
  const dnnl::memory::dims xd(x.dims.begin(), x.dims.end()), yd(r.out_dims.begin(), r.out_dims.end());
  const auto dt = onednn::dnnl_type(x.dtype);
  if (!dt) return unsupported("depth_to_space: dtype");
  dnnl::memory::desc in = x.layout, out;
  std::vector<D2sAxis> axes;
  std::vector<int64_t> outer;
  const int64_t blk = d2s_channel_block(in, &outer);
  if (blk > 1 && a.mode == "DCR" && (x.dims[1] / (s * s)) % blk == 0) {
    const auto tag = blk == 8 ? dnnl::memory::format_tag::aBcd8b : dnnl::memory::format_tag::aBcd16b;
    if (blk != 8 && blk != 16) return unsupported("depth_to_space: channel block " + std::to_string(blk));
    out = dnnl::memory::desc(yd, *dt, tag);
    axes = d2s_blocked_axes(x.dims, outer, blk, s);
  } else {
    if (!onednn::dense_strides(in)) in = dnnl::memory::desc(xd, *dt, dnnl::memory::format_tag::acdb);
    const std::vector<int64_t> xs = d2s_strides_of(in);
    const bool channels_last = xs[1] == 1 && x.dims[1] > 1;
    out = dnnl::memory::desc(yd, *dt, channels_last ? dnnl::memory::format_tag::acdb : dnnl::memory::format_tag::abcd);
    axes = d2s_axes(x.dims, xs, d2s_strides_of(out), s, a.mode == "DCR");
  }
  std::vector<int64_t> dims, src, dst;
  for (const D2sAxis& ax : axes) {
    dims.push_back(ax.extent);
    src.push_back(ax.src);
    dst.push_back(ax.dst);
  }
  onednn::Made made;
  made.step = make_strided_copy_step(dims, src, dst, dtype_size(x.dtype),
                                     "depth_to_space_" + a.mode + "_" + onednn::layout_name(in));
  if (!made.step) return unsupported("depth_to_space: strided copy");
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = in;
  made.out = out;
  return made;
}

}  // namespace ferry
