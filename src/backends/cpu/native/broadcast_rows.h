// backends/cpu/native/broadcast_rows.h — numpy broadcasting as rows: the output's dims
// are collapsed (size-1 dims dropped; neighbours merged where every input is either
// whole or broadcast along both), the last collapsed dim is the inner run, and each
// input reads element offset(i, row) + j * inner_stride(i) (stride 0 where it is
// broadcast). Fixed-size, so a kernel's run() allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

namespace ferry {

constexpr int kBroadcastMaxRank = 12;
constexpr int kBroadcastMaxInputs = 3;

struct BroadcastRows {
  int rank = 0, inputs = 0;
  int64_t dims[kBroadcastMaxRank] = {};
  int64_t strides[kBroadcastMaxInputs][kBroadcastMaxRank] = {};

  int64_t inner() const { return rank ? dims[rank - 1] : 1; }
  int64_t inner_stride(int i) const { return rank ? strides[i][rank - 1] : 0; }
  int64_t rows() const {
    int64_t r = 1;
    for (int a = 0; a + 1 < rank; ++a) r *= dims[a];
    return r;
  }
  /// Element offset of input i at the start of row `row`.
  int64_t offset(int i, int64_t row) const {
    int64_t off = 0;
    for (int a = rank - 2; a >= 0; --a) {
      off += (row % dims[a]) * strides[i][a];
      row /= dims[a];
    }
    return off;
  }
};

/// Plans `ins` (each broadcast to `out`); false when a rank exceeds the limits or a
/// shape does not broadcast to `out`.
inline bool plan_broadcast_rows(const std::vector<const std::vector<int64_t>*>& ins, const std::vector<int64_t>& out,
                                BroadcastRows* b) {
  const int k = int(ins.size());
  if (k > kBroadcastMaxInputs || out.size() > size_t(kBroadcastMaxRank)) return false;
  b->inputs = k;
  b->rank = 0;
  const size_t R = out.size();
  bool prev_full[kBroadcastMaxInputs] = {};
  for (size_t a = 0; a < R; ++a) {
    if (out[a] == 1) continue;
    bool full[kBroadcastMaxInputs];
    for (int i = 0; i < k; ++i) {
      const std::vector<int64_t>& d = *ins[size_t(i)];
      if (d.size() > R) return false;
      const size_t lead = R - d.size();
      const int64_t v = a < lead ? 1 : d[a - lead];
      if (v != out[a] && v != 1) return false;
      full[i] = v == out[a];
    }
    bool merge = b->rank > 0;
    for (int i = 0; i < k && merge; ++i) merge = full[i] == prev_full[i];
    if (merge) {
      b->dims[b->rank - 1] *= out[a];
    } else {
      b->dims[b->rank++] = out[a];
    }
    for (int i = 0; i < k; ++i) prev_full[i] = full[i], b->strides[i][b->rank - 1] = full[i];  // 1 = whole, for now
  }
  for (int i = 0; i < k; ++i) {
    int64_t running = 1;
    for (int a = b->rank - 1; a >= 0; --a) {
      const bool whole = b->strides[i][a] != 0;
      b->strides[i][a] = whole ? running : 0;
      if (whole) running *= b->dims[a];
    }
  }
  return true;
}

}  // namespace ferry
