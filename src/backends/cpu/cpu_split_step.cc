// backends/cpu/cpu_split_step.cc — Split of a channels-last or channel-blocked (nChw8c / 16c,
// along the channels in whole blocks) input as one strided copy per output
// (native/strided_copy.h), each output in the input's layout. YOLOv8's C2f block splits a channels-last conv output in two along
// the channels and feeds both halves to convs and a Concat that run channels-last: on the
// kernel table's (plain) Split that took a reorder to plain and one back per half.
#include <algorithm>
#include <numeric>

#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/strided_copy.h"
#include "backends/cpu/onednn/onednn_common.h"
#include "ir/op_attrs.h"

namespace ferry {
namespace {

/// Runs one sub-step per output, each reading input 0 and writing its output.
class SplitCopiesStep : public Step {
 public:
  SplitCopiesStep(std::vector<std::unique_ptr<Step>> parts, std::string name)
      : parts_(std::move(parts)), name_(std::move(name)) {}
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.empty() || !io->inputs[0] || io->outputs.size() != parts_.size())
      return internal_error(name_ + ": one input and one output per part expected");
    auto bound = std::make_unique<Bound>();
    for (size_t i = 0; i < parts_.size(); ++i) {
      bound->ios.push_back(std::make_unique<StepIO>());
      StepIO& sub = *bound->ios.back();
      sub.inputs = {io->inputs[0]};
      sub.outputs = {io->outputs[i]};
      sub.scratch = io->scratch;
      FERRY_ASSIGN_OR_RETURN(std::unique_ptr<BoundStep> b, parts_[i]->bind(&sub));
      bound->parts.push_back(std::move(b));
    }
    return std::unique_ptr<BoundStep>(std::move(bound));
  }

 private:
  struct Bound : BoundStep {
    std::vector<std::unique_ptr<StepIO>> ios;
    std::vector<std::unique_ptr<BoundStep>> parts;
    Status run() override {
      for (auto& p : parts) FERRY_TRY(p->run());
      return Status::Ok();
    }
  };
  std::vector<std::unique_ptr<Step>> parts_;
  std::string name_;
};

/// nChw8c / 16c split along the channels in whole blocks: per image, output i is one run of
/// C_i * H * W floats of the input, at channel offset c0 * H * W.
Result<onednn::Made> split_blocked(const StepRequest& r, int64_t axis, int64_t block) {
  const std::vector<int64_t>& xd = r.ops[0].dims;
  if (axis != 1) return unsupported("split: a channel-blocked input split along another axis");
  const int64_t hw = xd[2] * xd[3];
  std::vector<std::unique_ptr<Step>> parts;
  onednn::Made made;
  int64_t start = 0;
  for (size_t i = 0; i < r.all_out_dims.size(); ++i) {
    const std::vector<int64_t>& d = r.all_out_dims[i];
    if (d[1] % block) return unsupported("split: a channel block split between outputs");
    std::unique_ptr<Step> part =
        make_strided_copy_step({xd[0], d[1] * hw}, {xd[1] * hw, 1}, {d[1] * hw, 1}, sizeof(float), "split", start * hw);
    if (!part) return unsupported("split: strided copy");
    parts.push_back(std::move(part));
    if (i == 0) made.out = channel_blocked_desc(d, block);
    else made.more_outs.push_back(channel_blocked_desc(d, block));
    start += d[1];
  }
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = r.ops[0].layout;
  made.step = std::make_unique<SplitCopiesStep>(std::move(parts), "split_strided_copy_" + onednn::layout_name(made.out));
  return made;
}

}  // namespace

Result<onednn::Made> split_step(const StepRequest& r) {
  const onednn::Operand& x = r.ops[0];
  const size_t rank = x.dims.size();
  if (x.constant || x.dtype != DType::f32 || rank == 0) return unsupported("split: a computed f32 input");
  if (r.all_out_dims.empty()) return unsupported("split: output dims");
  int64_t axis = r.node.attrs<SplitAttrs>().axis;
  if (axis < 0) axis += int64_t(rank);
  if (axis < 0 || axis >= int64_t(rank)) return unsupported("split: axis");
  int64_t total = 0;
  for (const auto& d : r.all_out_dims) {
    if (d.size() != rank || onednn::numel(d) == 0) return unsupported("split: an empty or odd output");
    total += d[size_t(axis)];
  }
  if (total != x.dims[size_t(axis)]) return unsupported("split: sizes do not cover the axis");
  // A channels-last or channel-blocked input: outputs in its layout; plain or other blocked
  // inputs: the kernel table's Split.
  if (onednn::is_plain(x.layout)) return unsupported("split: plain input (the kernel table's Split)");
  if (const int64_t block = channel_block_4d(x.layout)) return split_blocked(r, axis, block);
  const auto xs = onednn::dense_strides(x.layout);
  if (!xs) return unsupported("split: a blocked input");
  if (rank != 4 || (*xs)[1] != 1) return unsupported("split: a dense layout other than nhwc");
  auto layout_of = [&](const std::vector<int64_t>& dims) {
    return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), dnnl::memory::data_type::f32,
                              dnnl::memory::format_tag::acdb);
  };
  std::vector<std::unique_ptr<Step>> parts;
  onednn::Made made;
  int64_t start = 0;
  for (size_t i = 0; i < r.all_out_dims.size(); ++i) {
    const std::vector<int64_t>& d = r.all_out_dims[i];
    const dnnl::memory::desc out = layout_of(d);
    const std::vector<int64_t> ys = *onednn::dense_strides(out);
    // Walk the output in its memory order (largest stride first).
    std::vector<size_t> order(rank);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ys[a] > ys[b]; });
    std::vector<int64_t> dims, src, dst;
    for (size_t a : order) dims.push_back(d[a]), src.push_back((*xs)[a]), dst.push_back(ys[a]);
    std::unique_ptr<Step> part = make_strided_copy_step(dims, src, dst, sizeof(float), "split", start * (*xs)[size_t(axis)]);
    if (!part) return unsupported("split: strided copy");
    parts.push_back(std::move(part));
    if (i == 0) made.out = out;
    else made.more_outs.push_back(out);
    start += d[size_t(axis)];
  }
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = x.layout;
  made.step = std::make_unique<SplitCopiesStep>(std::move(parts), "split_strided_copy_acdb");
  return made;
}

}  // namespace ferry
