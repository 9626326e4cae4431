// backends/cpu/cpu_concat_step.cc — Concat over a plain, channels-last or channel-blocked
// layout as one parallel copy: in the layout's memory order the output is `outer` rows, each
// the operands' runs one after the other (run i: operand i's dims from the concat axis on, in
// memory order; nChw8c / 16c along the channels with whole blocks: per image, an operand's
// blocks are one run). oneDNN 2.6's simple concat copied basic-pitch's 8 x [1,172,309,1] -> last
// axis (runs of one float) at ~0.2 GB/s; here a run of one float is a store, longer ones
// a memcpy. oneDNN's nChw8c concat of YOLOv8's C2f outputs ran at ~2.3 GB/s (AVX2 oneDNN on
// Zen 5: 3.1 ms, 11% of nudenet on one thread). Other blocked leads stay on oneDNN.
#include <algorithm>
#include <cstring>

#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/channel_affine.h"
#include "backends/cpu/onednn/onednn_common.h"
#include "ir/activation.h"
#include "ir/op_attrs.h"
#include "passes/fusion_util.h"

namespace ferry {
namespace {

constexpr int64_t kConcatStepParallelBytes = 1 << 16;

class ConcatCopyStep : public Step {
 public:
  ConcatCopyStep(int64_t outer, std::vector<int64_t> runs, std::string name)
      : outer_(outer), runs_(std::move(runs)), name_(std::move(name)) {
    for (int64_t r : runs_) row_ += r;
  }
  /// Copies act(x * scale + shift) per channel; `block` 0: channels-last (a run is C_i channels),
  /// else channel-blocked (per image, a run is C_i / block blocks of `pixels` x block).
  /// `out`: f32, bf16 (its readers are all bf16 steps) or u8 quantized by `q` (its readers all
  /// QuantizeLinear so; the caller checked channel_affine_u8_kernel).
  void set_affine(ChannelAffine a, int64_t block, int64_t pixels, Isa isa, std::string name, DType out,
                  const onednn::Int8Requant* q) {
    affine_ = std::move(a), block_ = block, pixels_ = pixels, kernel_ = channel_affine_kernel(isa);
    if (out == DType::bf16) kernel_bf16_ = channel_affine_bf16_kernel(isa);
    if (out == DType::u8) kernel_u8_ = channel_affine_u8_kernel(isa), q_scale_ = q->scale, q_zero_ = float(q->zero_point);
    name_ = std::move(name);
  }
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.size() != runs_.size() || io->outputs.size() != 1)
      return internal_error(name_ + ": one input per operand and one output expected");
    for (const Tensor* t : io->inputs)
      if (!t) return internal_error(name_ + ": an operand is missing");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const ConcatCopyStep& s, StepIO* io) : s_(s), io_(io), src_(s.runs_.size()) {}
    Status run() override {
      const int64_t n = int64_t(s_.runs_.size()), row = s_.row_, outer = s_.outer_;
      for (int64_t i = 0; i < n; ++i) src_[size_t(i)] = reinterpret_cast<const float*>(io_->inputs[size_t(i)]->raw());
      float* y = reinterpret_cast<float*>(io_->outputs[0]->raw());
      const float* const* src = src_.data();
      const int64_t* runs = s_.runs_.data();
      if (s_.kernel_u8_) {
        uint8_t* y8 = reinterpret_cast<uint8_t*>(io_->outputs[0]->raw());
        const ConcatCopyStep& st = s_;
        auto k = [&st](const float* x, int64_t ldx, uint8_t* y, int64_t ldy, int64_t rows, int64_t cols, const float* sc,
                       const float* b, bool relu) {
          st.kernel_u8_(x, ldx, y, ldy, rows, cols, sc, b, relu, st.q_scale_, st.q_zero_);
        };
        return s_.block_ ? s_.run_affine_blocked(k, src, y8) : s_.run_affine_channels_last(k, src, y8);
      }
      if (s_.kernel_bf16_) {
        uint16_t* y16 = reinterpret_cast<uint16_t*>(io_->outputs[0]->raw());
        return s_.block_ ? s_.run_affine_blocked(s_.kernel_bf16_, src, y16)
                         : s_.run_affine_channels_last(s_.kernel_bf16_, src, y16);
      }
      if (s_.kernel_) return s_.block_ ? s_.run_affine_blocked(s_.kernel_, src, y) : s_.run_affine_channels_last(s_.kernel_, src, y);
      if (outer < 64 && outer * row * 4 >= kConcatStepParallelBytes) {
        // Few long rows (a concat along the leading axes): pieces of 16k floats of each run.
        constexpr int64_t kPiece = 1 << 14;
        int64_t pieces = 0;
        for (int64_t i = 0; i < n; ++i) pieces += (runs[i] + kPiece - 1) / kPiece;
#pragma omp parallel for schedule(static) if (pieces > 1)
        for (int64_t t = 0; t < outer * pieces; ++t) {
          const int64_t o = t / pieces;
          int64_t q = t % pieces, i = 0, at = 0;
          while (q >= (runs[i] + kPiece - 1) / kPiece) q -= (runs[i] + kPiece - 1) / kPiece, at += runs[i], ++i;
          const int64_t lo = q * kPiece, len = std::min(kPiece, runs[i] - lo);
          std::memcpy(y + o * row + at + lo, src[i] + o * runs[i] + lo, size_t(len) * sizeof(float));
        }
        return Status::Ok();
      }
      // Blocks of rows: every operand's runs of a block, so the output is written in order.
      const int64_t block = std::max<int64_t>(1, 4096 / row), blocks = (outer + block - 1) / block;
#pragma omp parallel for schedule(static) if (outer * row * 4 >= kConcatStepParallelBytes)
      for (int64_t b = 0; b < blocks; ++b) {
        const int64_t o1 = std::min(outer, (b + 1) * block);
        for (int64_t o = b * block; o < o1; ++o) {
          float* dst = y + o * row;
          for (int64_t i = 0; i < n; ++i) {
            const int64_t run = runs[i];
            if (run == 1) *dst = src[i][o];
            else std::memcpy(dst, src[i] + o * run, size_t(run) * sizeof(float));
            dst += run;
          }
        }
      }
      return Status::Ok();
    }

   private:
    const ConcatCopyStep& s_;
    StepIO* io_;
    std::vector<const float*> src_;
  };
  /// Channels-last: row o of operand i (C_i channels) goes to columns [at_i, at_i + C_i) of
  /// output row o; blocks of rows over the threads.
  template <class Fn, class T>
  Status run_affine_channels_last(Fn kernel, const float* const* src, T* y) const {
    const int64_t n = int64_t(runs_.size()), rows = 64, blocks = (outer_ + rows - 1) / rows;
#pragma omp parallel for schedule(static) if (outer_ * row_ * 4 >= kConcatStepParallelBytes)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t o0 = b * rows, m = std::min(rows, outer_ - o0);
      for (int64_t i = 0, at = 0; i < n; at += runs_[size_t(i)], ++i)
        kernel(src[i] + o0 * runs_[size_t(i)], runs_[size_t(i)], y + o0 * row_ + at, row_, m, runs_[size_t(i)],
                affine_.scale.data() + at, affine_.shift.data() + at, affine_.relu);
    }
    return Status::Ok();
  }
  /// Channel-blocked: per image, operand i's run is C_i / B blocks of [pixels x B].
  template <class Fn, class T>
  Status run_affine_blocked(Fn kernel, const float* const* src, T* y) const {
    const int64_t tile = pixels_ * block_, tiles = row_ / tile;
#pragma omp parallel for schedule(static) if (outer_ * row_ * 4 >= kConcatStepParallelBytes)
    for (int64_t t = 0; t < outer_ * tiles; ++t) {
      const int64_t o = t / tiles, k = t % tiles;  // image o, channel block k of the output
      int64_t i = 0, first = 0;                    // operand i holds output blocks [first, first + runs_[i] / tile)
      while (k >= first + runs_[size_t(i)] / tile) first += runs_[size_t(i)] / tile, ++i;
      const float* x = src[i] + o * runs_[size_t(i)] + (k - first) * tile;
      kernel(x, block_, y + o * row_ + k * tile, block_, pixels_, block_, affine_.scale.data() + k * block_,
              affine_.shift.data() + k * block_, affine_.relu);
    }
    return Status::Ok();
  }

  int64_t outer_, row_ = 0;
  std::vector<int64_t> runs_;
  std::string name_;
  ChannelAffine affine_;
  int64_t block_ = 0, pixels_ = 0;
  ChannelAffineFn kernel_ = nullptr;
  ChannelAffineBf16Fn kernel_bf16_ = nullptr;
  ChannelAffineU8Fn kernel_u8_ = nullptr;
  float q_scale_ = 0, q_zero_ = 0;
};

}  // namespace

dnnl::memory::desc channel_blocked_desc(const std::vector<int64_t>& dims, int64_t block) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), dnnl::memory::data_type::f32,
                            block == 8 ? dnnl::memory::format_tag::aBcd8b : dnnl::memory::format_tag::aBcd16b);
}

int64_t channel_block_4d(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& c = md.data;
  if (c.format_kind != dnnl_blocked || c.ndims != 4 || c.data_type != dnnl_f32) return 0;
  const auto& b = c.format_desc.blocking;
  if (b.inner_nblks != 1 || b.inner_idxs[0] != 1 || (b.inner_blks[0] != 8 && b.inner_blks[0] != 16)) return 0;
  const std::vector<int64_t> dims(c.dims, c.dims + 4);
  if (dims[1] % b.inner_blks[0] != 0) return 0;  // a padded block
  return md == channel_blocked_desc(dims, b.inner_blks[0]) ? b.inner_blks[0] : 0;
}

namespace {

/// concat_copy_step's plan, and the layout it chose: channels-last, or the channel block (0: neither).
struct ConcatPlan {
  onednn::Made made;
  ConcatCopyStep* step = nullptr;
  bool channels_last = false;
  int64_t block = 0;
};

Result<ConcatPlan> plan_concat_copy(const StepRequest& r) {
  const std::vector<onednn::Operand>& ops = r.ops;
  const size_t rank = r.out_dims.size();
  if (ops.empty() || rank == 0) return unsupported("concat copy: no operands");
  for (const onednn::Operand& o : ops)
    if (!o.present() || o.dtype != DType::f32 || o.dims.size() != rank || onednn::numel(o.dims) == 0)
      return unsupported("concat copy: f32 operands of the output's rank, none empty");
  int64_t axis = r.node.attrs<ConcatAttrs>().axis;
  if (axis < 0) axis += int64_t(rank);
  if (axis < 0 || axis >= int64_t(rank)) return unsupported("concat copy: axis");
  // The layout: that of the first computed non-plain operand (channels-last, or channel-blocked
  // along the channels with whole blocks), else plain.
  bool channels_last = false;
  int64_t block = 0;
  if (r.blocked)
    for (const onednn::Operand& o : ops)
      if (!o.constant && !onednn::is_plain(o.layout)) {
        const auto st = onednn::dense_strides(o.layout);
        block = channel_block_4d(o.layout);
        if (block) {
          if (axis != 1) return unsupported("concat copy: a channel-blocked concat along another axis");
          // A channel block split between operands: oneDNN's concat goes plain too; so does the copy.
          const int64_t b = block;
          for (const onednn::Operand& q : ops)
            if (q.dims[1] % b) block = 0;
          break;
        }
        if (rank != 4 || !st || (*st)[1] != 1 || o.dims[1] == 1)
          return unsupported("concat copy: a blocked operand (oneDNN keeps its format)");
        channels_last = true;
        break;
      }
  if (channels_last || block)
    for (const onednn::Operand& o : ops)
      if (o.constant) return unsupported("concat copy: a constant operand of a channels-last or blocked concat");
  std::vector<size_t> order(rank);
  for (size_t i = 0; i < rank; ++i) order[i] = i;
  if (channels_last) order = {0, 2, 3, 1};
  size_t pos = 0;
  while (order[pos] != size_t(axis)) ++pos;
  int64_t outer = 1;
  for (size_t k = 0; k < pos; ++k) outer *= r.out_dims[order[k]];
  std::vector<int64_t> runs;
  for (const onednn::Operand& o : ops) {
    int64_t run = 1;
    for (size_t k = pos; k < rank; ++k) run *= o.dims[order[k]];
    runs.push_back(run);
  }
  // Channel-blocked along the channels (axis 1, identity order): per image, each operand's
  // blocks are one run of C_i * H * W.
  auto layout_of = [&](const std::vector<int64_t>& dims) {
    if (block) return channel_blocked_desc(dims, block);
    return channels_last ? dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()),
                                              dnnl::memory::data_type::f32, dnnl::memory::format_tag::acdb)
                         : onednn::plain_desc(DType::f32, dims);
  };
  ConcatPlan plan;
  onednn::Made& made = plan.made;
  for (const onednn::Operand& o : ops) made.want.push_back(o.constant ? std::nullopt : std::optional(layout_of(o.dims)));
  made.out = layout_of(r.out_dims);
  auto step = std::make_unique<ConcatCopyStep>(outer, std::move(runs), "concat_copy_f32_" + onednn::layout_name(made.out));
  plan.step = step.get();
  made.step = std::move(step);
  plan.channels_last = channels_last, plan.block = block;
  return plan;
}

}  // namespace

Result<onednn::Made> concat_copy_step(const StepRequest& r) {
  FERRY_ASSIGN_OR_RETURN(ConcatPlan plan, plan_concat_copy(r));
  return std::move(plan.made);
}

namespace {

/// `v`'s values per channel of a 4-D output of `channels` channels (passes/fusion_util.h), when
/// `v` is an f32 constant; else nullopt.
std::optional<std::vector<float>> per_channel(const Value* v, int64_t channels) {
  if (!v || !v->is_constant() || v->constant()->dtype() != DType::f32) return std::nullopt;
  const std::optional<std::vector<double>> d = per_channel_values(*v->constant(), 4, 1, channels);
  if (!d) return std::nullopt;
  return std::vector<float>(d->begin(), d->end());  // f32 values: exact both ways
}

}  // namespace

std::optional<std::pair<const Node*, ChannelAffine>> concat_affine_reader(const Graph& g, const Node& concat,
                                                                         int64_t channels) {
  const Value* out = concat.output(0);
  if (!out || out->uses().size() != 1 || g.is_graph_output(out)) return std::nullopt;
  const Node& m = *out->uses()[0].node;
  if (m.op() != Op::FusedMul || out->uses()[0].index != 0 || m.input(1) == out || m.input(2)) return std::nullopt;
  const std::optional<Activation> act = activation_from_name(epilogue_attrs(m).activation);
  if (!act || (*act != Activation::kNone && *act != Activation::kRelu)) return std::nullopt;
  std::optional<std::vector<float>> scale = per_channel(m.input(1), channels);
  std::optional<std::vector<float>> shift =
      m.input(3) ? per_channel(m.input(3), channels) : std::optional(std::vector<float>(size_t(channels), 0.f));
  if (!scale || !shift) return std::nullopt;
  return std::pair<const Node*, ChannelAffine>(&m, ChannelAffine{std::move(*scale), std::move(*shift),
                                                                 *act == Activation::kRelu});
}

Result<onednn::Made> concat_affine_step(const StepRequest& r, ChannelAffine affine) {
  FERRY_ASSIGN_OR_RETURN(ConcatPlan plan, plan_concat_copy(r));
  const std::vector<int64_t>& d = r.out_dims;
  if (!plan.channels_last && !plan.block) return unsupported("concat affine: channels-last or channel-blocked operands");
  if (d.size() != 4 || int64_t(affine.scale.size()) != d[1] || int64_t(affine.shift.size()) != d[1])
    return unsupported("concat affine: one scale and shift per channel of a 4-D output");
  const DType out = r.out_dtype;
  const bool u8 = out == DType::u8 && r.requant && r.requant->dtype == DType::u8 && channel_affine_u8_kernel(r.isa);
  if (out != DType::f32 && out != DType::bf16 && !u8)
    return unsupported("concat affine: an f32, bf16 or (AVX-512) u8 output");
  const std::string name = "concat_affine_f32_" + onednn::layout_name(plan.made.out) + (affine.relu ? "+relu" : "") +
                           (out == DType::f32 ? "" : "+dst_" + std::string(out == DType::u8 ? "u8" : "bf16"));
  if (out != DType::f32) plan.made.out = onednn::with_data_type(plan.made.out, *onednn::dnnl_type(out));
  plan.step->set_affine(std::move(affine), plan.block, d[2] * d[3], r.isa, name, out, r.requant);
  return std::move(plan.made);
}

}  // namespace ferry
