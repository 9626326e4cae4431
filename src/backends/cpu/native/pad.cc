// backends/cpu/native/pad.cc — Pad (constant, reflect, edge, wrap; negative pads crop;
// the axes input) of any dtype, output row by output row: a row lies in the padding of
// an outer axis (constant: filled; other modes: read from the mapped source row) or
// maps to a source row, of which the kept run is one memcpy and the pads on both
// sides are filled or mapped element by element. The source index of output position o
// of an axis of cropped length n, j = o - lead, outside [0, n), is the reference's
// (ops/pad.cc): edge clamps, wrap takes j mod n, reflect mirrors on 0 and n - 1 with
// period 2(n - 1). Rows split across OpenMP threads; run() allocates nothing.
#include <algorithm>
#include <cstring>

#include "backends/cpu/cpu_kernels.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int kPadMaxRank = 12;
constexpr int64_t kPadParallelBytes = 1 << 16;

enum class PadModeNative { constant, reflect, edge, wrap };

struct PadAxisNative {
  int64_t in = 0, out = 0, crop = 0, n = 0, lead = 0;  // n: cropped length
};

/// Source index along the axis for output position o, or -1 (the constant).
int64_t pad_source_native(const PadAxisNative& a, PadModeNative mode, int64_t o) {
  int64_t j = o - a.lead;
  if (j < 0 || j >= a.n) {
    switch (mode) {
      case PadModeNative::constant: return -1;
      case PadModeNative::edge: j = j < 0 ? 0 : a.n - 1; break;
      case PadModeNative::wrap: j = ((j % a.n) + a.n) % a.n; break;
      case PadModeNative::reflect:
        if (a.n == 1) {
          j = 0;
        } else {
          const int64_t period = 2 * (a.n - 1);
          j = ((j % period) + period) % period;
          if (j >= a.n) j = period - j;
        }
        break;
    }
  }
  return a.crop + j;
}

bool pad_mode_native(const std::string& m, PadModeNative* mode) {
  if (m == "constant") *mode = PadModeNative::constant;
  else if (m == "reflect") *mode = PadModeNative::reflect;
  else if (m == "edge") *mode = PadModeNative::edge;
  else if (m == "wrap") *mode = PadModeNative::wrap;
  else return false;
  return true;
}

}  // namespace

bool cpu_kernel_accepts_pad(const Node& n, const std::vector<const Tensor*>& known,
                            const std::vector<std::vector<int64_t>>& dims) {
  PadModeNative mode;
  if (dims.empty() || dims[0].empty() || dims[0].size() > size_t(kPadMaxRank)) return false;
  if (!pad_mode_native(n.attrs<PadAttrs>().mode, &mode)) return false;
  // The reference's errors (an empty axis padded by reflection, a bad constant) stay its own.
  for (int64_t d : dims[0])
    if (d == 0) return false;
  if (n.num_inputs() > 2 && n.input(2)) {  // constant_value: one element
    if (dims.size() < 3) return false;
    int64_t c = 1;
    for (int64_t d : dims[2]) c *= d;
    if (c != 1) return false;
  }
  (void)known;
  return true;
}

Status pad__generic(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  PadModeNative mode;
  const int r = int(x.rank());
  if (r == 0 || r > kPadMaxRank || y.rank() != r || y.dtype() != x.dtype() || !pad_mode_native(ctx.attrs<PadAttrs>().mode, &mode))
    return op_reference_kernel(Op::Pad)(ctx);
  // Per-axis begin / end pads from the pads (and axes) input.
  int64_t begin[kPadMaxRank] = {}, end[kPadMaxRank] = {};
  const Tensor& pads = ctx.input(1);
  const int64_t np = pads.numel();
  int64_t axes[kPadMaxRank];
  int64_t na = r;
  if (ctx.has_input(3)) {
    na = ctx.input(3).numel();
    if (na > r || np != 2 * na) return op_reference_kernel(Op::Pad)(ctx);
    for (int64_t i = 0; i < na; ++i) {
      int64_t a = int64_t(ctx.input(3).get_double(i));
      axes[i] = a < 0 ? a + r : a;
      if (axes[i] < 0 || axes[i] >= r) return op_reference_kernel(Op::Pad)(ctx);
    }
  } else {
    if (np != 2 * r) return op_reference_kernel(Op::Pad)(ctx);
    for (int64_t i = 0; i < r; ++i) axes[i] = i;
  }
  for (int64_t i = 0; i < na; ++i) {
    begin[axes[i]] = int64_t(pads.get_double(i));
    end[axes[i]] = int64_t(pads.get_double(na + i));
  }
  PadAxisNative ax[kPadMaxRank];
  for (int a = 0; a < r; ++a) {
    PadAxisNative& p = ax[a];
    p.in = x.dim(a);
    p.out = y.dim(a);
    p.crop = std::max<int64_t>(-begin[a], 0);
    p.n = p.in - p.crop - std::max<int64_t>(-end[a], 0);
    p.lead = std::max<int64_t>(begin[a], 0);
    if (p.out != p.in + begin[a] + end[a]) return internal_error("native pad: planned output size");
    if (p.n <= 0 && p.out > 0 && mode != PadModeNative::constant)  // the reference's error
      return op_reference_kernel(Op::Pad)(ctx);
  }
  if (y.numel() == 0) return Status::Ok();
  const size_t esz = dtype_size(x.dtype());
  uint8_t value[16] = {};
  if (mode == PadModeNative::constant && ctx.has_input(2)) {
    if (ctx.input(2).dtype() != x.dtype() || ctx.input(2).numel() != 1 || esz > sizeof(value))
      return op_reference_kernel(Op::Pad)(ctx);
    std::memcpy(value, ctx.input(2).raw(), esz);
  }
  int64_t in_stride[kPadMaxRank];
  in_stride[r - 1] = 1;
  for (int a = r - 1; a > 0; --a) in_stride[a - 1] = in_stride[a] * x.dim(a);
  // Rows along the last padded axis q: the unpadded axes after it are one run of `unit`
  // elements per position (a [1, 172, 208, 1] -> [1, 172, 309, 1] pad: rows of 309, not of 1).
  int q = r - 1;
  while (q > 0 && begin[q] == 0 && end[q] == 0) --q;
  const int64_t unit = in_stride[q];
  const size_t ub = size_t(unit) * esz;
  const PadAxisNative& last = ax[q];
  const int64_t inner = last.out, rows = y.numel() / std::max<int64_t>(inner * unit, 1);
  // The kept run of axis q: output [lead, lead + keep) <- source [crop, crop + keep).
  const int64_t keep = std::max<int64_t>(0, std::min(last.n, inner - last.lead));
  const uint8_t* src = x.raw();
  uint8_t* dst = y.raw();
  auto fill = [&](uint8_t* o, int64_t count) {
    for (int64_t j = 0; j < count; ++j) std::memcpy(o + size_t(j) * esz, value, esz);
  };
#pragma omp parallel for schedule(static) if (y.numel() * int64_t(esz) >= kPadParallelBytes)
  for (int64_t row = 0; row < rows; ++row) {
    uint8_t* o = dst + size_t(row * inner) * ub;
    int64_t off = 0, rem = row;
    bool in_pad = false;
    for (int a = q - 1; a >= 0; --a) {
      const int64_t s = pad_source_native(ax[a], mode, rem % ax[a].out);
      rem /= ax[a].out;
      if (s < 0) in_pad = true;
      off += s * in_stride[a];
    }
    if (in_pad) {
      fill(o, inner * unit);
      continue;
    }
    const uint8_t* s = src + size_t(off) * esz;
    if (keep > 0) std::memcpy(o + size_t(last.lead) * ub, s + size_t(last.crop) * ub, size_t(keep) * ub);
    for (int64_t j = 0; j < inner; ++j) {
      if (j >= last.lead && j < last.lead + keep) {
        j = last.lead + keep - 1;
        continue;
      }
      const int64_t m = pad_source_native(last, mode, j);
      if (m < 0) fill(o + size_t(j) * ub, unit);
      else std::memcpy(o + size_t(j) * ub, s + size_t(m) * ub, ub);
    }
  }
  return Status::Ok();
}

}  // namespace ferry
