#include "backends/cpu/native/strided_copy.h"

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
    for (int64_t k = 0; k < n; ++k) t[k * di] = s[k * si];
  }
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
        case 1: copy_rows(src, dst, s_.rows_, d, ss, ds, rank); break;
        case 2: copy_rows(reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint16_t*>(dst), s_.rows_, d, ss, ds, rank); break;
        case 4: copy_rows(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst), s_.rows_, d, ss, ds, rank); break;
        default: copy_rows(reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(dst), s_.rows_, d, ss, ds, rank); break;
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

std::unique_ptr<Step> make_strided_copy_step(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                                             const std::vector<int64_t>& dst_strides, size_t elem_size,
                                             std::string name, int64_t src_offset) {
  if (dims.empty() || dims.size() > kMaxRank || src_strides.size() != dims.size() || dst_strides.size() != dims.size())
    return nullptr;
  if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8) return nullptr;
  for (int64_t d : dims)
    if (d <= 0) return nullptr;
  return std::make_unique<StridedCopyStep>(dims, src_strides, dst_strides, elem_size, std::move(name), src_offset);
}

}  // namespace ferry
