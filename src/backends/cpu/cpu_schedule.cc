// backends/cpu/cpu_schedule.cc — stage 1 of a signature: a step per node.
//
// For each node in topological order: its output shapes for this signature
// (shape inference on concrete dims); nodes whose inputs are all known (shape
// subgraphs: Shape, Size, arithmetic on them) are evaluated here and become known
// slots; every other node gets a step from cpu_step_table.h (oneDNN primitive,
// own layout-agnostic kernel), a view (Reshape-like over an arena value), ferry's
// kernel-table kernel (plain layouts) or its reference kernel, in that order — but
// a kernel override of the node's (op, dtype) (a plugin, ops/registry.h) comes first.
// Operands are reordered to the layout a step wants once per (value, layout);
// graph outputs end plain.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "backends/cpu/cpu_dynamic_int8_matmul_step.h"
#include "backends/cpu/cpu_int8_requant.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_plan.h"
#include "backends/cpu/cpu_precision.h"
#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/cpu_step_work.h"
#include "backends/cpu/native/strided_copy.h"
#include "backends/cpu/onednn/onednn_steps.h"
#include "ir/subgraph.h"
#include "ops/registry.h"

namespace ferry {
namespace {

using onednn::Made;
using onednn::Operand;
using dnnl::memory;

/// Largest per-signature value the schedule evaluates ahead of time.
constexpr size_t kMaxFoldBytes = size_t(64) << 20;

bool is_view_op(Op op) {
  return op == Op::Reshape || op == Op::Flatten || op == Op::Squeeze || op == Op::Unsqueeze || op == Op::Identity;
}

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

std::string layout_key(const memory::desc& md) {
  return std::string(reinterpret_cast<const char*>(&md.data), sizeof(md.data));
}

/// Runs a kernel-table function (own SIMD kernel or the reference kernel) through a KernelContext.
class FnStep : public Step {
 public:
  FnStep(const Node& node, KernelFn fn, std::string name, bool reference, bool in_place)
      : node_(node), fn_(fn), name_(std::move(name)), reference_(reference), in_place_(in_place) {}
  std::string kernel_name() const override { return name_; }
  int in_place_input() const override { return in_place_ ? 0 : -1; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const FnStep& s, StepIO* io) : s_(s), io_(io), ctx_(s.node_, io->inputs, &outs_) {
      for (Tensor* t : io->outputs) outs_.push_back(*t);
      planned_ = outs_;
    }
    Status run() override {
      for (size_t i = 0; i < outs_.size(); ++i) {
        // A kernel may have replaced an output last time (allocate_output): point it back at the arena.
        if (outs_[i].raw() != io_->outputs[i]->raw()) outs_[i] = *io_->outputs[i];
        // Reference kernels may accumulate into their output: give them the zeros the interpreter gives.
        if (s_.reference_) std::memset(outs_[i].raw(), 0, outs_[i].nbytes());
      }
      Status st = s_.fn_(ctx_);
      if (!st.ok()) return std::move(st).with_context("running node " + s_.node_.describe());
      for (size_t i = 0; i < outs_.size(); ++i) {
        Tensor& want = *io_->outputs[i];
        if (outs_[i].raw() == want.raw()) continue;
        if (outs_[i].dims() != want.dims() || outs_[i].dtype() != want.dtype())
          return internal_error("node " + s_.node_.describe() + ": kernel output " + std::to_string(i) + " is " +
                                outs_[i].type_string() + ", planned " + want.type_string());
        std::memcpy(want.raw(), outs_[i].raw(), want.nbytes());
      }
      // Hold no reference to memory outside the arena (a caller's output tensor, one the
      // kernel allocated): the caller's next run may reuse its tensor only while it is unshared.
      for (size_t i = 0; i < outs_.size(); ++i)
        if (outs_[i].buffer() != planned_[i].buffer()) outs_[i] = planned_[i];
      return Status::Ok();
    }

   private:
    const FnStep& s_;
    StepIO* io_;
    std::vector<Tensor> outs_, planned_;
    KernelContext ctx_;
  };
  const Node& node_;
  KernelFn fn_;
  std::string name_;
  bool reference_;
  bool in_place_;
};

/// Builds one signature's slots and steps.
class Scheduler {
 public:
  Scheduler(const Graph& g, CpuSession::Signature& sig, const SessionOptions& opt)
      : g_(g), sig_(sig), opt_(opt), fast_(!opt.reference_kernels) {}

  void add_inputs(const std::vector<const Value*>& values, const std::vector<std::vector<int64_t>>& dims);
  /// False when `n`'s output shape depends on data: the segment ends before it.
  Result<bool> schedule(const Node& n);
  Result<bool> schedule_steps(const Node& n);
  Status finish_outputs();
  /// Ends the segment before order[end]: the values order[end..] and the graph outputs read.
  Status carry_from(const std::vector<const Node*>& order, size_t end);
  /// The node scheduled after the current one (null: the last): a step may compute both only when
  /// no segment can end between them.
  void set_next(const Node* next) { next_ = next; }

 private:
  int add_slot(Slot s);
  int slot_for(const Value* v);
  Operand operand_of(int slot) const;
  static memory::desc plain_md(const Slot& s);
  /// `slot` in layout `want`; `to` (undefined: the slot's dtype) converts it on the way (f32 -> bf16).
  Result<int> in_layout(int slot, const memory::desc& want, DType to = DType::undefined);
  Result<int> plain_slot(int slot);
  enum class Facts { kRunTime, kFolded, kDataDependent };
  /// Output facts of `n` for this signature: kFolded binds the outputs as known slots.
  Result<Facts> infer_or_fold(const Node& n, std::vector<OutputInfo>* outs);
  Facts fold_shape_root(const Node& n);
  int new_out_slot(const Value* v, const OutputInfo& o, const memory::desc& layout);
  std::string shapes_of(const std::vector<int>& ins, const std::vector<int>& outs) const;
  Status schedule_made(Made made, std::vector<int> ins, const Node& n, const std::vector<OutputInfo>& outs,
                       bool all_outputs, const Value* out0 = nullptr);
  Result<bool> try_concat_affine(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs);
  Result<bool> try_step_table(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs);
  Result<bool> try_int8(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs);
  Result<bool> try_requantized_mul(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs);
  struct QuantizedResidual {
    onednn::Int8Input q;
    int slot;              ///< z_q's
    const Value* dq;       ///< DequantizeLinear(z_q): the FusedConv's input 3
  };
  std::optional<QuantizedResidual> quantized_residual(const Node& n, const std::vector<int>& ins, DType t) const;
  Result<bool> try_dynamic_int8_matmul(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs);
  Result<bool> try_bf16(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs);
  bool try_requantized(const Node& n);
  void erase_dead_bf16_casts(const Value* rounded);
  bool bf16_accelerated(Op op);
  bool bf16_attention(const Node& n);
  bool fp32_attention_on_tiles(const Node& n, const KernelEntry* k) const;
  bool bf16_readers_only(const Node& n);
  int bf16_slot_of_rounded(const Value* v) const;
  std::optional<std::vector<Op>> bf16_ops_;  ///< the CPU target's accelerated bf16 ops at opt_.isa
  void erase_unread_reorder(int slot);
  bool quantize_into_layout(int slot, const memory::desc& want);
  size_t step_writing(int slot) const;
  bool try_view(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs);
  bool try_transpose_view(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs);
  bool try_gather_view(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs);
  Status schedule_kernel(const Node& n, std::vector<int> ins, const std::vector<OutputInfo>& outs);

  const Graph& g_;
  CpuSession::Signature& sig_;
  const SessionOptions& opt_;
  const bool fast_;
  bool serial_ = false;  ///< the node being scheduled runs on one thread
  std::unordered_map<const Value*, int> slot_of_;
  std::vector<int> node_slots_;           ///< the node being scheduled: a slot per input (-1: absent)
  std::vector<OutputInfo> node_outs_;     ///< and its outputs' types
  void erase_dead_dequantize(size_t k, int xq);
  size_t erased_steps_ = 0;               ///< steps try_int8 removed (a DequantizeLinear it absorbed)
  std::unordered_map<const Value*, size_t> absorbed_;  ///< per DequantizeLinear output: int8 steps reading its x_q
                                                       ///< (per rounded bf16 input: bf16 steps reading its x)
  std::unordered_map<int, onednn::Int8Requant> requant_slots_;  ///< slots an int8 step wrote requantized (u8 / s8)
  std::unordered_set<const Node*> fused_away_;  ///< nodes another node's step computes (try_concat_affine)
  const Node* next_ = nullptr;                  ///< set_next
};

/// `make(low)` where `low` is not f32 (bf16: every reader of the output is a bf16 step; u8: every
/// reader quantizes it to u8), else or where that declines `make(DType::f32)`; `outs[0].dtype`
/// says which the step writes.
template <class Make>
Result<Made> made_in_low_or_f32(DType low, std::vector<OutputInfo>& outs, Make make) {
  if (low != DType::f32) {
    Result<Made> made = make(low);
    if (made.ok()) outs[0].dtype = low;
    if (made.ok() || made.status().code() != StatusCode::kUnsupported) return made;
  }
  return make(DType::f32);
}

template <class Make>
Result<Made> made_in_bf16_or_f32(bool bf16, std::vector<OutputInfo>& outs, Make make) {
  return made_in_low_or_f32(bf16 ? DType::bf16 : DType::f32, outs, make);
}

/// The u8 quantization every reader of n's output 0 applies (int8 steps' inputs), or nullopt.
std::optional<onednn::Int8Requant> u8_requant_readers(const Graph& g, const Node& n) {
  std::optional<onednn::Int8Requant> rq = int8_requant_readers(g, n);
  return rq && rq->dtype == DType::u8 ? rq : std::nullopt;
}

bool slot_is_plain(const Slot& s) { return s.layout.is_zero() || onednn::is_plain(s.layout); }

int Scheduler::add_slot(Slot s) {
  if (s.bytes == 0) s.bytes = size_t(std::max<int64_t>(1, numel(s.dims))) * dtype_size(s.dtype);
  sig_.slots.push_back(std::move(s));
  return int(sig_.slots.size()) - 1;
}

memory::desc Scheduler::plain_md(const Slot& s) {
  return onednn::dnnl_type(s.dtype) ? onednn::plain_desc(s.dtype, s.dims) : memory::desc();
}

void Scheduler::add_inputs(const std::vector<const Value*>& values, const std::vector<std::vector<int64_t>>& dims) {
  for (size_t i = 0; i < values.size(); ++i) {
    const Value* v = values[i];
    Slot s;
    s.kind = Slot::kInput;
    s.dtype = v->dtype();
    s.dims = dims[i];
    s.input_index = int(i);
    s.value = v;
    int id = add_slot(std::move(s));
    slot_of_[v] = id;
    sig_.input_slots.push_back(id);
  }
}

int Scheduler::slot_for(const Value* v) {
  if (auto it = slot_of_.find(v); it != slot_of_.end()) return it->second;
  if (!v->is_constant()) return -1;
  Slot s;
  s.kind = Slot::kConstant;
  s.dtype = v->constant()->dtype();
  s.dims = v->constant()->dims();
  s.data = v->constant();
  s.value = v;
  int id = add_slot(std::move(s));
  slot_of_[v] = id;
  return id;
}

Operand Scheduler::operand_of(int slot) const {
  Operand o;
  if (slot < 0) return o;
  const Slot& s = sig_.slots[size_t(slot)];
  o.dtype = s.dtype;
  o.dims = s.dims;
  o.layout = s.layout.is_zero() ? plain_md(s) : s.layout;
  o.constant = s.known_tensor();
  return o;
}

Result<int> Scheduler::in_layout(int slot, const memory::desc& want, DType to) {
  Slot& s = sig_.slots[size_t(slot)];
  if (to == DType::undefined) to = s.dtype;
  if (to == s.dtype && (s.layout.is_zero() ? onednn::is_plain(want) : s.layout == want)) return slot;
  const std::string key = layout_key(want);
  if (auto it = s.reorders.find(key); it != s.reorders.end()) return it->second;
  if (to == s.dtype && quantize_into_layout(slot, want)) return slot;
  memory::desc from = s.layout.is_zero() ? plain_md(s) : s.layout;
  Made made;
  // Between two dense unblocked layouts (NCHW <-> NHWC): own strided copy, faster than oneDNN's here.
  auto fs = onednn::dense_strides(from), ws = onednn::dense_strides(want);
  if (fs && ws && fast_ && to == s.dtype)
    made.step = make_strided_copy_step(s.dims, *fs, *ws, dtype_size(s.dtype),
                                       "strided_copy_" + onednn::layout_name(from) + "_to_" + onednn::layout_name(want));
  if (!made.step) { FERRY_ASSIGN_OR_RETURN(made, onednn::make_reorder(from, want)); }
  Slot r;
  r.dtype = to;
  r.dims = s.dims;
  r.layout = want;
  r.bytes = want.get_size();
  const std::string shapes = dims_text(s.dtype, s.dims) + (to == s.dtype ? "" : " -> " + dims_text(to, s.dims));
  int rs = add_slot(std::move(r));  // invalidates `s`
  PlannedStep ps;
  ps.ins = {slot};
  ps.outs = {rs};
  ps.info = {"(reorder)", "Reorder", made.step->kernel_name(), shapes, made.step->kernel_name().find("[ref") != std::string::npos};
  ps.step = std::move(made.step);
  sig_.steps.push_back(std::move(ps));
  sig_.slots[size_t(slot)].reorders[key] = rs;
  return rs;
}

Result<int> Scheduler::plain_slot(int slot) {
  const Slot& s = sig_.slots[size_t(slot)];
  if (slot_is_plain(s)) return slot;
  return in_layout(slot, plain_md(s));
}

Scheduler::Facts Scheduler::fold_shape_root(const Node& n) {
  // Known from the input's dims alone: the root of every shape subgraph.
  const std::vector<int64_t>& d = sig_.slots[size_t(slot_for(n.input(0)))].dims;
  Tensor t;
  if (n.op() == Op::Size) {
    t = Tensor::scalar<int64_t>(numel(d));
  } else {
    const int64_t r = int64_t(d.size());
    auto norm = [&](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t(0), r); };
    const ShapeAttrs& a = n.attrs<ShapeAttrs>();
    int64_t start = norm(a.start), end = a.end ? norm(*a.end) : r;
    std::vector<int64_t> v(d.begin() + start, d.begin() + std::max(start, end));
    t = Tensor::from_vector<int64_t>(v, {int64_t(v.size())});
  }
  Slot ks;
  ks.kind = Slot::kKnown;
  ks.dtype = DType::i64;
  ks.dims = t.dims();
  ks.known = std::move(t);
  ks.value = n.output(0);
  slot_of_[n.output(0)] = add_slot(std::move(ks));
  ++sig_.info.folded;
  return Facts::kFolded;
}

Result<Scheduler::Facts> Scheduler::infer_or_fold(const Node& n, std::vector<OutputInfo>* outs) {
  std::vector<InputInfo> infos(n.num_inputs());
  bool all_known = n.num_inputs() > 0;
  std::vector<const Tensor*> known(n.num_inputs(), nullptr);
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    const Value* v = n.input(i);
    if (!v) continue;
    int id = slot_for(v);
    if (id < 0) return internal_error("node " + n.describe() + ": input '" + v->name() + "' is not computed");
    const Slot& s = sig_.slots[size_t(id)];
    known[i] = s.known_tensor();
    all_known &= known[i] != nullptr;
    infos[i] = {s.dtype, Shape::from_dims(s.dims), known[i]};
  }
  FERRY_TRY(infer_node(n, infos, outs).with_context("node " + n.describe()));
  // Refuse absurd outputs here, naming the node, before the planner sums them into one arena.
  for (const OutputInfo& o : *outs) {
    if (!o.shape.is_static()) continue;
    std::optional<int64_t> count = checked_numel(o.shape.static_dims());
    const size_t limit = tensor_size_limit();
    if (!count || size_t(*count) > limit / std::max<size_t>(1, dtype_size(o.dtype)))
      return invalid_model("node " + n.describe() + ": output " + o.shape.to_string() +
                           " exceeds the tensor size limit of " + std::to_string(limit) + " bytes");
  }
  if ((n.op() == Op::Shape || n.op() == Op::Size) && n.input(0)) return fold_shape_root(n);
  size_t bytes = 0;
  for (size_t i = 0; i < outs->size(); ++i) {
    const OutputInfo& o = (*outs)[i];
    if (o.dtype == DType::undefined)
      return internal_error("node " + n.describe() + ": output " + std::to_string(i) + " has no dtype");
    if (!o.shape.is_static()) return all_known ? Facts::kRunTime : Facts::kDataDependent;
    bytes += size_t(numel(o.shape.static_dims())) * dtype_size(o.dtype);
  }
  if (!all_known || bytes > kMaxFoldBytes) return Facts::kRunTime;
  std::vector<Tensor> results(outs->size());
  for (size_t i = 0; i < results.size(); ++i) {
    FERRY_ASSIGN_OR_RETURN(results[i], Tensor::zeros((*outs)[i].dtype, (*outs)[i].shape.static_dims()));
  }
  KernelContext kctx(n, known, &results);
  FERRY_TRY(op_reference_kernel(n.op())(kctx).with_context("evaluating node " + n.describe()));
  for (size_t i = 0; i < results.size(); ++i) {
    Slot s;
    s.kind = Slot::kKnown;
    s.dtype = results[i].dtype();
    s.dims = results[i].dims();
    s.known = std::move(results[i]);
    s.value = n.output(i);
    slot_of_[n.output(i)] = add_slot(std::move(s));
  }
  ++sig_.info.folded;
  return Facts::kFolded;
}

int Scheduler::new_out_slot(const Value* v, const OutputInfo& o, const memory::desc& layout) {
  Slot s;
  s.dtype = o.dtype;
  s.dims = o.shape.static_dims();
  s.value = v;
  if (!layout.is_zero() && !onednn::is_plain(layout)) {
    s.layout = layout;
    s.bytes = layout.get_size();
  }
  int id = add_slot(std::move(s));
  slot_of_[v] = id;
  return id;
}

std::string Scheduler::shapes_of(const std::vector<int>& ins, const std::vector<int>& outs) const {
  std::string text;
  for (int s : ins)
    if (s >= 0) text += (text.empty() ? "" : ", ") + dims_text(sig_.slots[size_t(s)].dtype, sig_.slots[size_t(s)].dims);
  text += " ->";
  for (int s : outs) text += " " + dims_text(sig_.slots[size_t(s)].dtype, sig_.slots[size_t(s)].dims);
  return text;
}

Status Scheduler::schedule_made(Made made, std::vector<int> ins, const Node& n, const std::vector<OutputInfo>& outs,
                                bool all_outputs, const Value* out0) {
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i] >= 0 && i < made.want.size() && made.want[i]) {
      FERRY_ASSIGN_OR_RETURN(ins[i], in_layout(ins[i], *made.want[i]));
    }
  PlannedStep ps;
  ps.ins = std::move(ins);
  ps.outs.push_back(new_out_slot(out0 ? out0 : n.output(0), outs[0], made.out));
  // Outputs a oneDNN step does not write (LayerNormalization's unused statistics): plain zeros.
  for (size_t i = 1; i < n.num_outputs(); ++i) {
    const int slot = new_out_slot(n.output(i), outs[i], i - 1 < made.more_outs.size() ? made.more_outs[i - 1]
                                                                                     : memory::desc());
    if (all_outputs) ps.outs.push_back(slot);  // LSTM's Y_h, Y_c
  }
  // A oneDNN step on one of oneDNN's reference implementations ("[ref:any]") is as slow as ours: say so.
  const std::string kernel = made.step->kernel_name();
  ps.info = {n.name(), op_name(n.op()), kernel, shapes_of(ps.ins, ps.outs), kernel.find("[ref") != std::string::npos};
  ps.step = std::move(made.step);
  sig_.steps.push_back(std::move(ps));
  return Status::Ok();
}

Result<bool> Scheduler::try_step_table(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs) {
  const StepRow* row = step_row(n.op());
  if (!row || outs.empty() || (outs[0].dtype != DType::f32 && !row->any_out_dtype)) return false;
  for (size_t i = 1; i < n.num_outputs() && !row->all_outputs; ++i)  // most oneDNN steps write output 0 only
    if (!n.output(i)->uses().empty() || g_.is_graph_output(n.output(i))) return false;
  std::vector<Operand> ops;
  for (int s : ins) ops.push_back(operand_of(s));
  const std::vector<int64_t> out_dims = outs[0].shape.static_dims();
  std::vector<std::vector<int64_t>> all_out_dims;
  if (row->all_outputs)
    for (const OutputInfo& o : outs) all_out_dims.push_back(o.shape.static_dims());
  // bf16 where every reader is a bf16 step (an SE block's gate product before its projection),
  // u8 where every reader quantizes it for an int8 step (a transformer's LayerNorm).
  std::vector<OutputInfo> step_outs = outs;
  const std::optional<onednn::Int8Requant> rq = row->u8_out ? u8_requant_readers(g_, n) : std::nullopt;
  const DType low = rq ? DType::u8 : row->bf16_out && bf16_readers_only(n) ? DType::bf16 : DType::f32;
  Result<Made> made = made_in_low_or_f32(low, step_outs, [&](DType dst) {
    return row->make({n, ops, out_dims, opt_.blocked_layouts, opt_.isa, dst, all_out_dims, opt_.conv_algorithm,
                      dst == DType::u8 ? &*rq : nullptr});
  });
  // An operand in a layout the step does not take (a Transpose view read channels-last by a
  // matmul, or a residual Add's channels-last output read by a LayerNorm), where no own kernel of
  // the kernel table would take the op instead: the step reads it plain, through one reorder,
  // rather than the reference kernel.
  std::vector<int> step_ins = ins;
  const auto not_plain = [&](int s) { return s >= 0 && !slot_is_plain(sig_.slots[size_t(s)]); };
  const bool own_kernel = !ins.empty() && ins[0] >= 0 && select_kernel(n.op(), sig_.slots[size_t(ins[0])].dtype, opt_.isa);
  if (!made.ok() && made.status().code() == StatusCode::kUnsupported && !own_kernel &&
      std::any_of(ins.begin(), ins.end(), not_plain)) {
    for (size_t i = 0; i < ins.size(); ++i)
      if (not_plain(ins[i])) {
        FERRY_ASSIGN_OR_RETURN(step_ins[i], plain_slot(ins[i]));
        ops[i] = operand_of(step_ins[i]);
      }
    made = row->make(
        {n, ops, out_dims, opt_.blocked_layouts, opt_.isa, DType::f32, std::move(all_out_dims), opt_.conv_algorithm});
  }
  if (!made.ok()) {
    if (made.status().code() == StatusCode::kUnsupported) return false;  // declined: the next option
    return std::move(made).status().with_context("node " + n.describe());
  }
  if (row->step_inputs >= 0 && step_ins.size() > size_t(row->step_inputs)) step_ins.resize(size_t(row->step_inputs));
  FERRY_TRY(schedule_made(std::move(made).value(), step_ins, n, step_outs, row->all_outputs));
  if (step_outs[0].dtype == DType::u8) requant_slots_[slot_of_.at(n.output(0))] = *rq;
  return true;
}

/// x_q's quantization when `dq` is DequantizeLinear(x_q u8 / s8, scale, zero_point) per tensor.
std::optional<onednn::Int8Input> per_tensor_int8(const Node& dq) {
  if (dq.op() != Op::DequantizeLinear || dq.num_inputs() < 2 || !dq.input(0)) return std::nullopt;
  const DType t = dq.input(0)->dtype();
  if (t != DType::u8 && t != DType::i8) return std::nullopt;
  const Value* s = dq.input(1);
  const Value* z = dq.num_inputs() > 2 ? dq.input(2) : nullptr;
  if (!s || !s->is_constant() || s->constant()->dtype() != DType::f32 || s->constant()->numel() != 1) return std::nullopt;
  if (z && (!z->is_constant() || z->constant()->dtype() != t || z->constant()->numel() != 1)) return std::nullopt;
  onednn::Int8Input x;
  x.scale = s->constant()->data<float>()[0];
  if (z) x.zero_point = t == DType::u8 ? int32_t(z->constant()->data<uint8_t>()[0]) : int32_t(z->constant()->data<int8_t>()[0]);
  if (!(x.scale > 0) || !std::isfinite(x.scale)) return std::nullopt;
  return x;
}

bool is_int8_candidate(Op op) {
  return op == Op::Conv || op == Op::FusedConv || op == Op::MatMul || op == Op::FusedMatMul;
}

/// Removes step `k` (the DequantizeLinear an int8 step absorbed), and the reorder of x_q
/// (slot `xq`) to plain it read, unless another step reads that too.
void Scheduler::erase_dead_dequantize(size_t k, int xq) {
  const int in = sig_.steps[k].ins.empty() ? -1 : sig_.steps[k].ins[0];
  sig_.steps.erase(sig_.steps.begin() + std::ptrdiff_t(k));
  ++erased_steps_;
  if (in < 0 || in == xq) return;
  for (const PlannedStep& ps : sig_.steps)
    if (std::find(ps.ins.begin(), ps.ins.end(), in) != ps.ins.end()) return;
  for (size_t r = sig_.steps.size(); r-- > 0;) {
    const std::vector<int>& outs = sig_.steps[r].outs;
    if (std::find(outs.begin(), outs.end(), in) == outs.end()) continue;
    if (sig_.steps[r].info.op != "Reorder") return;
    sig_.steps.erase(sig_.steps.begin() + std::ptrdiff_t(r));
    ++erased_steps_;
    auto& cache = sig_.slots[size_t(xq)].reorders;
    for (auto it = cache.begin(); it != cache.end(); ++it)
      if (it->second == in) { cache.erase(it); break; }
    return;
  }
}

/// A FusedConv's residual (input 3) as DequantizeLinear(z_q) per tensor with z_q of type `t`
/// in a slot, its DequantizeLinear a step of its own; nullopt otherwise.
std::optional<Scheduler::QuantizedResidual> Scheduler::quantized_residual(const Node& n, const std::vector<int>& ins,
                                                                          DType t) const {
  if (n.op() != Op::FusedConv || n.num_inputs() < 4 || ins.size() < 4 || ins[3] < 0 || !n.input(3)) return std::nullopt;
  const Value* dq = n.input(3);
  const std::optional<onednn::Int8Input> q = dq->producer() ? per_tensor_int8(*dq->producer()) : std::nullopt;
  if (!q || dq->producer()->input(0)->dtype() != t) return std::nullopt;
  auto slot = slot_of_.find(dq->producer()->input(0));
  if (slot == slot_of_.end() || step_writing(ins[3]) == sig_.steps.size()) return std::nullopt;
  return QuantizedResidual{*q, slot->second, dq};
}

/// y = n(DequantizeLinear(x_q), W) as one int8 step reading x_q (onednn/onednn_int8.h); the
/// DequantizeLinear's step is removed once no other step reads its output. A FusedConv's
/// residual DequantizeLinear(z_q) of the type the step writes y in is read as z_q too.
Result<bool> Scheduler::try_int8(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs) {
  if (!is_int8_candidate(n.op()) || ins.size() < 2 || ins[0] < 0 || outs.empty() || outs[0].dtype != DType::f32)
    return false;
  const Value* dqv = n.input(0);
  const Node* dq = dqv->producer();
  if (!dq) return false;
  const std::optional<onednn::Int8Input> x = per_tensor_int8(*dq);
  if (!x) return false;
  auto xq = slot_of_.find(dq->input(0));
  if (xq == slot_of_.end()) return false;
  const size_t k = step_writing(ins[0]);
  if (k == sig_.steps.size()) return false;  // folded, or not a step of its own
  std::vector<Operand> ops;
  for (int s : ins) ops.push_back(operand_of(s));
  ops[0] = operand_of(xq->second);
  const std::vector<int64_t> out_dims = outs[0].shape.static_dims();
  const StepRequest req{n, ops, out_dims, opt_.blocked_layouts, opt_.isa};
  // Every reader a QuantizeLinear of one scale / zero point: the step writes its u8 / s8.
  const std::optional<onednn::Int8Requant> rq = int8_requant_readers(g_, n);
  // ... and a residual DequantizeLinear(z_q) of that type: it reads z_q (a sum post-op).
  std::optional<QuantizedResidual> z = rq ? quantized_residual(n, ins, rq->dtype) : std::nullopt;
  std::vector<OutputInfo> step_outs = outs;
  std::vector<int> step_ins = ins;
  Result<Made> made = unsupported("f32 output");
  if (z) {
    std::vector<Operand> zops = ops;
    zops[3] = operand_of(z->slot);
    made = make_int8_step({n, zops, out_dims, opt_.blocked_layouts, opt_.isa}, *x, &*rq, &z->q);
    if (made.ok()) step_ins[3] = z->slot;
    else z.reset();
  }
  if (rq && !made.ok() && made.status().code() == StatusCode::kUnsupported) made = make_int8_step(req, *x, &*rq);
  if (rq && made.ok()) step_outs[0].dtype = rq->dtype;
  if (!made.ok() && made.status().code() == StatusCode::kUnsupported) made = make_int8_step(req, *x);
  if (!made.ok()) {
    if (made.status().code() == StatusCode::kUnsupported) return false;  // fp32 on the dequantized input
    return std::move(made).status().with_context("node " + n.describe());
  }
  // A DequantizeLinear that feeds several nodes (ONNX Runtime's quantizer shares one among
  // a layer's Q / K / V projections) goes once every use is an int8 step reading x_q (found
  // again each time: erasing one shifts the indices after it).
  if (z && ++absorbed_[z->dq] == z->dq->uses().size() && !g_.is_graph_output(z->dq))
    erase_dead_dequantize(step_writing(ins[3]), z->slot);
  if (++absorbed_[dqv] == dqv->uses().size() && !g_.is_graph_output(dqv))
    erase_dead_dequantize(step_writing(ins[0]), xq->second);
  step_ins[0] = xq->second;
  FERRY_TRY(schedule_made(std::move(made).value(), step_ins, n, step_outs, false));
  if (step_outs[0].dtype != DType::f32) requant_slots_[slot_of_.at(n.output(0))] = *rq;
  return true;
}

/// A Mul of two f32 values whose every reader is QuantizeLinear(y, s, z) (one scale and zero
/// point): the binary step writes y_q itself (EfficientNet's squeeze-excitation scaling before
/// its int8 projection; an int8 model's x * sigmoid(x) gates), so no f32 y and no QuantizeLinear
/// pass. Declined (the plain step, then the QuantizeLinear) where oneDNN has no such primitive.
Result<bool> Scheduler::try_requantized_mul(const Node& n, const std::vector<int>& ins,
                                             const std::vector<OutputInfo>& outs) {
  if (n.op() != Op::Mul || ins.size() != 2 || ins[0] < 0 || ins[1] < 0 || outs.size() != 1 || outs[0].dtype != DType::f32)
    return false;
  const std::optional<onednn::Int8Requant> rq = int8_requant_readers(g_, n);
  if (!rq) return false;
  const std::vector<Operand> ops = {operand_of(ins[0]), operand_of(ins[1])};
  const std::vector<int64_t> out_dims = outs[0].shape.static_dims();
  // A squeeze-excitation gate over channels-last x: ferry's channel scale; else oneDNN's binary.
  Result<Made> made = channel_scale_step({n, ops, out_dims, opt_.blocked_layouts, opt_.isa, rq->dtype, {},
                                          opt_.conv_algorithm, &*rq});
  if (!made.ok() && made.status().code() == StatusCode::kUnsupported)
    made = onednn::make_binary(n, ops, out_dims, {}, &*rq);
  if (!made.ok()) {
    if (made.status().code() == StatusCode::kUnsupported) return false;
    return std::move(made).status().with_context("node " + n.describe());
  }
  std::vector<OutputInfo> step_outs = outs;
  step_outs[0].dtype = rq->dtype;
  FERRY_TRY(schedule_made(std::move(made).value(), ins, n, step_outs, false));
  requant_slots_[slot_of_.at(n.output(0))] = *rq;
  return true;
}

/// A QuantizeLinear whose input an int8 step wrote requantized with its scale and zero
/// point (try_int8): its output is that slot, no step.
bool Scheduler::try_requantized(const Node& n) {
  if (n.op() != Op::QuantizeLinear || requant_slots_.empty() || n.num_inputs() < 1 || !n.input(0)) return false;
  auto in = slot_of_.find(n.input(0));
  if (in == slot_of_.end()) return false;
  const int slot = in->second;
  auto it = requant_slots_.find(slot);
  const std::optional<onednn::Int8Requant> q = per_tensor_quantize(n);
  if (it == requant_slots_.end() || !q || !(*q == it->second)) return false;
  slot_of_[n.output(0)] = slot;
  sig_.slots[size_t(slot)].value = n.output(0);  // what the slot holds (observers see the u8 value)
  return true;
}

/// quantize_dynamic's MatMulInteger as lower_integer_matmuls leaves it, MatMul(DequantizeLinear(
/// a_q, 1, a_zp), B') with a_zp computed (DynamicQuantizeLinear's), on exact integer sums
/// (cpu_dynamic_int8_matmul_step.h): the step reads a_q and a_zp; the DequantizeLinear goes
/// once every use is such a step (as try_int8's).
Result<bool> Scheduler::try_dynamic_int8_matmul(const Node& n, const std::vector<int>& ins,
                                                const std::vector<OutputInfo>& outs) {
  if (n.op() != Op::MatMul || ins.size() != 2 || ins[0] < 0 || ins[1] < 0 || outs.empty() ||
      outs[0].dtype != DType::f32)
    return false;
  const Value* dqv = n.input(0);
  const Node* dq = dqv->producer();
  if (!dq || dq->op() != Op::DequantizeLinear || dq->num_inputs() != 3 || !dq->input(0) || !dq->input(2) ||
      dq->input(2)->is_constant() || dq->input(0)->dtype() != DType::u8)
    return false;
  const Value* scale = dq->input(1);
  if (!scale || !scale->is_constant() || scale->constant()->dtype() != DType::f32 ||
      scale->constant()->numel() != 1 || scale->constant()->data<float>()[0] != 1.0f)
    return false;
  auto xq = slot_of_.find(dq->input(0));
  auto zq = slot_of_.find(dq->input(2));
  if (xq == slot_of_.end() || zq == slot_of_.end()) return false;
  size_t k = sig_.steps.size();
  while (k > 0 && std::find(sig_.steps[k - 1].outs.begin(), sig_.steps[k - 1].outs.end(), ins[0]) ==
                      sig_.steps[k - 1].outs.end())
    --k;
  if (k == 0) return false;  // folded, or not a step of its own
  const std::vector<Operand> ops = {operand_of(xq->second), operand_of(ins[1]), operand_of(zq->second)};
  const std::vector<int64_t> out_dims = outs[0].shape.static_dims();
  Result<Made> made = make_dynamic_int8_matmul_step({n, ops, out_dims, opt_.blocked_layouts, opt_.isa});
  if (!made.ok()) {
    if (made.status().code() == StatusCode::kUnsupported) return false;  // the f32 MatMul
    return std::move(made).status().with_context("node " + n.describe());
  }
  if (++absorbed_[dqv] == dqv->uses().size() && !g_.is_graph_output(dqv)) erase_dead_dequantize(k - 1, xq->second);
  FERRY_TRY(schedule_made(std::move(made).value(), {xq->second, zq->second}, n, outs, false));
  return true;
}

/// The f32 value x when `v` is Cast(Cast(x, to=bf16), to=f32): the input rounding the precision
/// pass writes for a node it runs in bf16 on hardware (precision/emulate_precision.h).
const Value* bf16_rounded_source(const Value* v) {
  const Node* up = v && v->dtype() == DType::f32 ? v->producer() : nullptr;
  if (!up || up->op() != Op::Cast || !up->input(0) || up->input(0)->dtype() != DType::bf16) return nullptr;
  const Node* down = up->input(0)->producer();
  if (!down || down->op() != Op::Cast || !down->input(0) || down->input(0)->dtype() != DType::f32) return nullptr;
  return down->input(0);
}

/// Where the step that writes `slot` is (sig_.steps.size(): none).
size_t Scheduler::step_writing(int slot) const {
  for (size_t k = sig_.steps.size(); k-- > 0;)
    if (std::find(sig_.steps[k].outs.begin(), sig_.steps[k].outs.end(), slot) != sig_.steps[k].outs.end()) return k;
  return sig_.steps.size();
}

/// An image input's QuantizeLinear (plain f32 [N, C <= 4, ...] -> u8) whose u8 output `slot` no
/// step has read yet, now wanted channels-last by an int8 convolution: the quantize step writes
/// that layout itself (native/quantize_nhwc.cc) instead of a plain u8 and a reorder. Later
/// readers that want it plain get a reorder from the new layout, as for any slot.
bool Scheduler::quantize_into_layout(int slot, const memory::desc& want) {
  const Slot& s = sig_.slots[size_t(slot)];
  if (!fast_ || s.dtype != DType::u8 || !slot_is_plain(s) || !s.value || g_.is_graph_output(s.value) ||
      s.dims.size() < 3 || s.dims.size() > 5 || !(want == onednn::channels_last_desc(memory::data_type::u8, s.dims)))
    return false;
  const Node* q = s.value->producer();
  const std::optional<onednn::Int8Requant> rq = q ? per_tensor_quantize(*q) : std::nullopt;
  const size_t k = step_writing(slot);
  if (!rq || rq->dtype != DType::u8 || k == sig_.steps.size() || sig_.steps[k].info.op != "QuantizeLinear" ||
      sig_.steps[k].ins.empty() || sig_.steps[k].ins[0] < 0 || !slot_is_plain(sig_.slots[size_t(sig_.steps[k].ins[0])]))
    return false;
  for (const PlannedStep& ps : sig_.steps)
    if (std::find(ps.ins.begin(), ps.ins.end(), slot) != ps.ins.end()) return false;
  for (const Slot& o : sig_.slots)
    if (o.view_of == slot) return false;
  std::unique_ptr<Step> step = make_quantize_u8_to_nhwc_step(rq->scale, uint8_t(rq->zero_point), s.dims, opt_.isa);
  if (!step) return false;
  sig_.steps[k].info.kernel = step->kernel_name();
  sig_.steps[k].step = std::move(step);
  sig_.slots[size_t(slot)].layout = want;
  return true;
}

/// Removes the reorder that writes `slot` when no step reads that any more.
void Scheduler::erase_unread_reorder(int slot) {
  for (const PlannedStep& ps : sig_.steps)
    if (std::find(ps.ins.begin(), ps.ins.end(), slot) != ps.ins.end()) return;
  const size_t r = step_writing(slot);
  if (r == sig_.steps.size() || sig_.steps[r].info.op != "Reorder" || sig_.steps[r].ins.empty()) return;
  const int from = sig_.steps[r].ins[0];
  sig_.steps.erase(sig_.steps.begin() + std::ptrdiff_t(r));
  ++erased_steps_;
  auto& cache = sig_.slots[size_t(from)].reorders;
  for (auto it = cache.begin(); it != cache.end(); ++it)
    if (it->second == slot) { cache.erase(it); break; }
}

/// Removes the steps of Cast(Cast(x, to=bf16), to=f32) = `rounded` once the bf16 steps read x
/// directly (the Cast to bf16 too when nothing else reads it), and a reorder of x they read.
void Scheduler::erase_dead_bf16_casts(const Value* rounded) {
  const Value* half = rounded->producer()->input(0);
  auto up = slot_of_.find(rounded), down = slot_of_.find(half);
  if (up == slot_of_.end() || down == slot_of_.end()) return;
  const size_t ku = step_writing(up->second);
  if (ku == sig_.steps.size()) return;
  sig_.steps.erase(sig_.steps.begin() + std::ptrdiff_t(ku));
  ++erased_steps_;
  if (half->uses().size() != 1 || g_.is_graph_output(half)) return;
  const size_t kd = step_writing(down->second);
  if (kd == sig_.steps.size()) return;
  const int in = sig_.steps[kd].ins.empty() ? -1 : sig_.steps[kd].ins[0];
  sig_.steps.erase(sig_.steps.begin() + std::ptrdiff_t(kd));
  ++erased_steps_;
  if (in >= 0) erase_unread_reorder(in);
}

/// Whether the CPU target runs `op` in bf16 on hardware at this ISA cap (cpu_precision.h):
/// an emulated node whose producer's output was rounded has the same Cast pair in front,
/// but keeps the fp32 step (its `why`, e.g. a ONEDNN_MAX_CPU_ISA cap, says why).
bool Scheduler::bf16_accelerated(Op op) {
  if (!bf16_ops_) {
    const PrecisionSupport s = cpu_precisions(opt_.isa).of(DType::bf16);
    bf16_ops_ = s.exec == PrecisionExec::accelerated ? s.accelerated_ops : std::vector<Op>{};
  }
  return std::find(bf16_ops_->begin(), bf16_ops_->end(), op) != bf16_ops_->end();
}

/// Whether the fused Attention `n` runs the bf16 kernel: the target accelerates bf16 Attention
/// (cpu_target.cc, where it is measured faster) and the precision pass rounded Q, K and V
/// (precision/emulate_precision.cc; the kernel rounds what it reads the same way).
bool Scheduler::bf16_attention(const Node& n) {
  if (n.num_inputs() < 3 || !bf16_accelerated(Op::Attention)) return false;
  for (size_t i = 0; i < 3; ++i)
    if (!bf16_rounded_source(n.input(i))) return false;
  return true;
}

/// Whether the fp32 Attention `n` (kernel k chosen) runs as three bf16 products a product on AMX
/// tiles: asked for (SessionOptions::fp32_bf16x3), the AVX-512 fp32 kernel chosen, and the CPU
/// target naming its bf16x3 kernel at this cap (cpu_fp32x3_attention_kernel). Else exact fp32.
bool Scheduler::fp32_attention_on_tiles(const Node& n, const KernelEntry* k) const {
  return opt_.fp32_bf16x3 && n.op() == Op::Attention && std::string(k->name) == "attention_f32__avx512" &&
         cpu_fp32x3_attention_kernel(opt_.isa) != nullptr;
}

/// The bf16 slot holding x when `v` is Cast(Cast(x, to=bf16), to=f32): x's own where a bf16 step
/// wrote it in bf16 (try_bf16's bf16 output), else a reorder of x into bf16 that another bf16
/// step already reads (the same rounding); -1 otherwise.
int Scheduler::bf16_slot_of_rounded(const Value* v) const {
  const Value* x = bf16_rounded_source(v);
  auto xs = x ? slot_of_.find(x) : slot_of_.end();
  if (xs == slot_of_.end()) return -1;
  const Slot& s = sig_.slots[size_t(xs->second)];
  if (s.dtype == DType::bf16) return xs->second;
  for (const auto& r : s.reorders)
    if (sig_.slots[size_t(r.second)].dtype == DType::bf16) return r.second;
  return -1;
}

/// Whether n's output 0 is read only through Cast(Cast(y, to=bf16), to=f32) pairs, each by bf16
/// step candidates as their input 0 or as a FusedConv's residual Z (and nothing else reads y or
/// the pairs): then the step may write y in bf16, which is exactly what those readers round it to.
bool Scheduler::bf16_readers_only(const Node& n) {
  const Value* y = n.output(0);
  for (size_t i = 1; i < n.num_outputs(); ++i)
    if (!n.output(i)->uses().empty() || g_.is_graph_output(n.output(i))) return false;
  if (y->uses().empty() || g_.is_graph_output(y)) return false;
  for (const Use& u : y->uses()) {
    const Value* half = u.node->output(0);
    if (u.node->op() != Op::Cast || half->dtype() != DType::bf16 || half->uses().empty() || g_.is_graph_output(half))
      return false;
    for (const Use& h : half->uses()) {
      const Value* r = h.node->output(0);
      if (h.node->op() != Op::Cast || r->dtype() != DType::f32 || r->uses().empty() || g_.is_graph_output(r)) return false;
      for (const Use& q : r->uses()) {
        const Node& reader = *q.node;
        // input 0, or the residual Z of a FusedConv (emulate_precision.h: a bf16 residual stream)
        const bool residual = q.index == 3 && reader.op() == Op::FusedConv;
        if ((q.index != 0 && !residual) || !bf16_accelerated(reader.op()) || reader.num_inputs() < 2 ||
            !reader.input(1) || !reader.input(1)->is_constant())
          return false;
        for (size_t i = 0; i < reader.num_inputs(); ++i)
          if (reader.input(i) == r && i != size_t(q.index)) return false;
      }
    }
  }
  return true;
}

/// y = n(Cast(Cast(x, to=bf16), to=f32), W) as one oneDNN step with bf16 source and weights
/// and f32 destination (onednn/onednn_steps.h: make_conv / make_matmul with a bf16 operand 0),
/// reading x through one reorder into the layout and dtype the primitive wants. The Casts'
/// steps go once every reader of the rounded value is such a step; a declined node runs them
/// and the fp32 step (the same numbers up to the summation order).
Result<bool> Scheduler::try_bf16(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs) {
  if (!is_int8_candidate(n.op()) || ins.size() < 2 || ins[0] < 0 || ins[1] < 0 || outs.empty() ||
      outs[0].dtype != DType::f32 || !n.input(1)->is_constant() || !bf16_accelerated(n.op()))
    return false;
  const Value* rounded = n.input(0);
  const Value* x = bf16_rounded_source(rounded);
  if (!x) return false;
  auto xs = slot_of_.find(x);
  if (xs == slot_of_.end() || sig_.slots[size_t(xs->second)].known_tensor()) return false;
  const StepRow* row = step_row(n.op());
  if (!row) return false;
  std::vector<Operand> ops;
  for (int s : ins) ops.push_back(operand_of(s));
  ops[0].dtype = DType::bf16;
  ops[0].layout = onednn::plain_desc(DType::bf16, ops[0].dims);
  ops[0].constant = nullptr;
  const std::vector<int64_t> out_dims = outs[0].shape.static_dims();
  // A bf16 output where every reader is a bf16 step (no reorder f32 -> bf16 between them);
  // makers decline it for a sum post-op or an own-kernel epilogue: f32 then.
  // A residual Z read rounded (a bf16 residual stream) whose producer wrote it in bf16: the sum
  // post-op reads it there, into a bf16 destination; an f32 destination reads Z widened (one
  // reorder into Z's layout in f32).
  const int zb = n.op() == Op::FusedConv && ins.size() > 3 && ins[3] >= 0 ? bf16_slot_of_rounded(n.input(3)) : -1;
  std::vector<OutputInfo> step_outs = outs;
  Result<Made> made = made_in_bf16_or_f32(bf16_readers_only(n), step_outs, [&](DType dst) {
    std::vector<Operand> o = ops;
    if (zb >= 0) {
      o[3] = operand_of(zb);
      o[3].dtype = dst;
      o[3].layout = onednn::with_data_type(o[3].layout, *onednn::dnnl_type(dst));
    }
    return row->make({n, o, out_dims, opt_.blocked_layouts, opt_.isa, dst});
  });
  if (!made.ok()) {
    if (made.status().code() == StatusCode::kUnsupported) return false;  // the Casts and the fp32 step
    return std::move(made).status().with_context("node " + n.describe());
  }
  Made m = std::move(made).value();
  const memory::desc want = !m.want.empty() && m.want[0] ? *m.want[0] : ops[0].layout;
  FERRY_ASSIGN_OR_RETURN(int xb, in_layout(xs->second, want, DType::bf16));
  if (!m.want.empty()) m.want[0] = std::nullopt;
  std::vector<int> step_ins = ins;
  step_ins[0] = xb;
  if (zb >= 0) {
    FERRY_ASSIGN_OR_RETURN(step_ins[3], in_layout(zb, onednn::with_data_type(operand_of(zb).layout,
                                                                              *onednn::dnnl_type(step_outs[0].dtype)),
                                                  step_outs[0].dtype));
  }
  if (row->step_inputs >= 0 && step_ins.size() > size_t(row->step_inputs)) step_ins.resize(size_t(row->step_inputs));
  if (++absorbed_[rounded] == rounded->uses().size() && !g_.is_graph_output(rounded)) erase_dead_bf16_casts(rounded);
  if (const Value* rz = zb >= 0 ? n.input(3) : nullptr; rz && ++absorbed_[rz] == rz->uses().size() && !g_.is_graph_output(rz))
    erase_dead_bf16_casts(rz);
  FERRY_TRY(schedule_made(std::move(m), step_ins, n, step_outs, false));
  return true;
}

bool Scheduler::try_view(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs) {
  if (!is_view_op(n.op()) || ins.empty() || ins[0] < 0 || sig_.slots[size_t(ins[0])].kind != Slot::kArena) return false;
  auto src = plain_slot(ins[0]);
  if (!src.ok()) return false;
  Slot v;
  v.dtype = outs[0].dtype;
  v.dims = outs[0].shape.static_dims();
  v.buffer = -2 - *src;  // resolved to the source's buffer when planning
  v.view_of = *src;
  v.view_offset = sig_.slots[size_t(*src)].view_offset;
  v.value = n.output(0);
  slot_of_[n.output(0)] = add_slot(std::move(v));
  ++sig_.info.views;
  return true;
}

/// A Transpose of a dense (unblocked) arena value is a view of the same bytes with its strides
/// permuted, where that view is plain (a channels-last convolution's output read as [N, H, W, C]:
/// ConvNeXt's permute before its LayerNorm) or channels-last (a plain [N, H, W, C] read as
/// [N, C, H, W]: its permute back, which the next convolution or residual Add reads as it is).
/// Other permutations keep their copy step; a reader that wants another layout reorders as usual.
bool Scheduler::try_transpose_view(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs) {
  if (n.op() != Op::Transpose || ins.empty() || ins[0] < 0) return false;
  const Slot& x = sig_.slots[size_t(ins[0])];
  if (x.kind != Slot::kArena || outs.empty() || !outs[0].shape.is_static()) return false;
  const auto dt = onednn::dnnl_type(x.dtype);
  if (!dt) return false;
  auto xs = onednn::dense_strides(x.layout.is_zero() ? plain_md(x) : x.layout);
  const size_t r = x.dims.size();
  const std::optional<std::vector<int64_t>>& attr = n.attrs<TransposeAttrs>().perm;
  if (r < 2 || (attr && attr->size() != r)) return false;
  std::vector<int64_t> perm(r), ys(r);
  for (size_t j = 0; j < r; ++j) perm[j] = attr ? (*attr)[j] : int64_t(r - 1 - j);
  if (!xs) {
    // A channel-blocked x (nChw8c under AVX2) moved to channels-last ([0, 2, .., 1], ConvNeXt's
    // NCHW -> NHWC after its depthwise conv): one reorder into acdb, and the view of that,
    // instead of a reorder to plain and a transpose copy.
    static const dnnl::memory::format_tag kLast[] = {dnnl::memory::format_tag::acdb, dnnl::memory::format_tag::acdeb};
    bool to_last = (r == 4 || r == 5) && perm[0] == 0 && perm[r - 1] == 1;
    for (size_t j = 1; j + 1 < r; ++j) to_last &= perm[j] == int64_t(j + 1);
    if (!to_last) return false;
    auto cl = in_layout(ins[0], memory::desc(onednn::to_dims(x.dims), *dt, kLast[r - 4]));
    if (!cl.ok()) return false;
    std::vector<int> via = ins;
    via[0] = *cl;
    return try_transpose_view(n, via, outs);
  }
  for (size_t j = 0; j < r; ++j) ys[j] = (*xs)[size_t(perm[j])];
  const std::vector<int64_t> yd = outs[0].shape.static_dims();
  const memory::desc ymd(onednn::to_dims(yd), *dt, onednn::to_dims(ys));
  const bool plain = onednn::is_plain(ymd);
  static const char* const kChannelsLast[] = {"", "", "", "acb", "acdb", "acdeb"};
  if (!plain && !(r <= 5 && onednn::layout_name(ymd) == kChannelsLast[r])) return false;
  Slot v;
  v.dtype = x.dtype;
  v.dims = yd;
  if (!plain) v.layout = ymd;
  v.buffer = -2 - ins[0];  // resolved to the source's buffer when planning
  v.view_of = ins[0];
  v.view_offset = x.view_offset;
  v.value = n.output(0);
  slot_of_[n.output(0)] = add_slot(std::move(v));
  ++sig_.info.views;
  return true;
}

/// A Gather of one constant index along axis 0 of a plain arena value is a view of one
/// contiguous slice of it (no copy): Swin's and ViT's `qkv[0]`, `qkv[1]`, `qkv[2]` of a packed
/// [3, B, H, S, D] projection. The slice starts 64-byte aligned or the Gather stays a copy.
bool Scheduler::try_gather_view(const Node& n, const std::vector<int>& ins, const std::vector<OutputInfo>& outs) {
  if (n.op() != Op::Gather || ins.size() != 2 || ins[0] < 0 || ins[1] < 0 || outs.empty()) return false;
  if (n.attrs<GatherAttrs>().axis != 0) return false;
  const Slot& x = sig_.slots[size_t(ins[0])];
  const Tensor* idx = sig_.slots[size_t(ins[1])].known_tensor();
  if (x.kind != Slot::kArena || !slot_is_plain(x) || x.dims.empty() || !idx || idx->numel() != 1 || idx->rank() != 0)
    return false;
  if (!is_integer(idx->dtype()) || !outs[0].shape.is_static()) return false;
  int64_t i = int64_t(idx->get_double(0));
  if (i < 0) i += x.dims[0];
  if (i < 0 || i >= x.dims[0]) return false;
  const size_t slice = x.bytes / size_t(x.dims[0]), offset = x.view_offset + size_t(i) * slice;
  if (offset % 64 != 0) return false;
  Slot v;
  v.dtype = x.dtype;
  v.dims = outs[0].shape.static_dims();
  v.bytes = slice;
  v.buffer = -2 - ins[0];  // resolved to the source's buffer when planning
  v.view_of = ins[0];
  v.view_offset = offset;
  v.value = n.output(0);
  slot_of_[n.output(0)] = add_slot(std::move(v));
  ++sig_.info.views;
  return true;
}

Status Scheduler::schedule_kernel(const Node& n, std::vector<int> ins, const std::vector<OutputInfo>& outs) {
  for (int& s : ins) {
    if (s >= 0) { FERRY_ASSIGN_OR_RETURN(s, plain_slot(s)); }
  }
  const KernelEntry* k = nullptr;
  if (fast_ && n.num_inputs() > 0 && ins[0] >= 0) k = select_kernel(n.op(), sig_.slots[size_t(ins[0])].dtype, opt_.isa);
  if (k && k->accepts) {  // a kernel for part of its op: the rest on the reference kernel, reported as such
    std::vector<const Tensor*> known;
    std::vector<std::vector<int64_t>> dims;
    for (int s : ins) {
      known.push_back(s >= 0 ? sig_.slots[size_t(s)].known_tensor() : nullptr);
      dims.push_back(s >= 0 ? sig_.slots[size_t(s)].dims : std::vector<int64_t>{});
    }
    if (!k->accepts(n, known, dims)) k = nullptr;
  }
  // The bf16 Attention kernel rounds Q, K, V itself: it reads them unrounded, and the Cast
  // pairs no other step reads are erased (as try_bf16 does for its reorders). Not K and V when
  // the node writes present_key / present_value: those copy K and V, rounded in the graph.
  const bool bf16_attn = k && n.op() == Op::Attention && bf16_attention(n);
  std::vector<const Value*> absorbed;
  for (size_t i = 0; bf16_attn && i < (n.num_outputs() > 1 ? 1u : 3u); ++i) {
    auto xs = slot_of_.find(bf16_rounded_source(n.input(i)));
    if (xs == slot_of_.end() || sig_.slots[size_t(xs->second)].known_tensor()) continue;
    FERRY_ASSIGN_OR_RETURN(ins[i], plain_slot(xs->second));
    absorbed.push_back(n.input(i));
  }
  PlannedStep ps;
  ps.ins = ins;
  for (size_t i = 0; i < n.num_outputs(); ++i) ps.outs.push_back(new_out_slot(n.output(i), outs[i], {}));
  if (bf16_attn) {
    // cpu_bf16_attention_kernel is not null here: bf16_accelerated(Attention) asked it.
    const std::string name = cpu_bf16_attention_kernel(opt_.isa);
    ps.step = std::make_unique<FnStep>(n, name == "attention_bf16__amx" ? attention_bf16__amx : attention_bf16__avx512bf16,
                                       name, false, k->in_place);
  }
  else if (k && fp32_attention_on_tiles(n, k))
    ps.step = std::make_unique<FnStep>(n, attention_f32x3__amx, "attention_f32x3__amx", false, k->in_place);
  else if (k)
    ps.step = std::make_unique<FnStep>(n, k->fn, k->name, false, k->in_place);
  else
    ps.step = std::make_unique<FnStep>(n, op_reference_kernel(n.op()), std::string("ref_") + op_name(n.op()), true, false);
  ps.info = {n.name(), op_name(n.op()), ps.step->kernel_name(), shapes_of(ps.ins, ps.outs), k == nullptr};
  sig_.steps.push_back(std::move(ps));
  for (const Value* r : absorbed)
    if (++absorbed_[r] == r->uses().size() && !g_.is_graph_output(r)) erase_dead_bf16_casts(r);
  return Status::Ok();
}

/// Whether `n` (operand slots `ins`, outputs `outs`) is too small to share out among
/// threads (cpu_step_work.h).
bool node_runs_serial(const CpuSession::Signature& sig, const Node& n, const std::vector<int>& ins,
                      const std::vector<OutputInfo>& outs) {
  std::vector<std::vector<int64_t>> in_dims;
  double bytes = 0;
  for (int s : ins) {
    in_dims.push_back(s >= 0 ? sig.slots[size_t(s)].dims : std::vector<int64_t>{});
    if (s >= 0) bytes += double(numel(sig.slots[size_t(s)].dims)) * double(dtype_size(sig.slots[size_t(s)].dtype));
  }
  std::vector<int64_t> out0;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].shape.is_static()) return false;
    const std::vector<int64_t> d = outs[i].shape.static_dims();
    bytes += double(numel(d)) * double(dtype_size(outs[i].dtype));
    if (i == 0) out0 = d;
  }
  return runs_serial(step_flops(n, in_dims, out0), bytes);
}

/// The OpenMP thread count for one scope (0: unchanged). oneDNN's gemm-based matmul keeps
/// the count it was created with and forks that many threads on every run, whatever the
/// caller's count then: a serial step's primitives are made under a count of 1.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int n) : saved_(n > 0 ? omp_get_max_threads() : 0) {
    if (n > 0) omp_set_num_threads(n);
  }
  ~ScopedOmpThreads() {
    if (saved_ > 0) omp_set_num_threads(saved_);
  }
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int saved_;
};

Result<bool> Scheduler::schedule(const Node& n) {
  const size_t first_step = sig_.steps.size(), erased = erased_steps_;
  serial_ = false;
  FERRY_ASSIGN_OR_RETURN(bool scheduled, schedule_steps(n));
  // The steps that scheduled `n` (its reorders and its step) run on one thread.
  if (scheduled && serial_)
    for (size_t i = first_step - (erased_steps_ - erased); i < sig_.steps.size(); ++i) sig_.steps[i].info.serial = true;
  return scheduled;
}

/// A Concat whose only reader is a FusedMul by per-channel constants (DenseNet's BN-ReLU on each
/// layer's concatenated features): one step writes act(x s + b) of the operands into the
/// FusedMul's output as it concatenates (cpu_concat_step.cc); the concatenation itself is never
/// written and the FusedMul, next in the order (so no segment ends between them), gets no step.
/// Per-layer validation sees the FusedMul's output only.
Result<bool> Scheduler::try_concat_affine(const Node& n, const std::vector<int>& ins,
                                          const std::vector<OutputInfo>& outs) {
  if (n.op() != Op::Concat || outs.size() != 1 || outs[0].dtype != DType::f32) return false;
  const std::vector<int64_t> out_dims = outs[0].shape.static_dims();
  if (out_dims.size() != 4) return false;
  auto reader = concat_affine_reader(g_, n, out_dims[1]);
  if (!reader || reader->first != next_) return false;
  std::vector<Operand> ops;
  for (int s : ins) ops.push_back(operand_of(s));
  // In bf16 where every reader of the affine's output is a bf16 step (DenseNet's 1x1 convs), in
  // u8 where every reader quantizes it for an int8 step.
  std::vector<OutputInfo> step_outs = outs;
  const std::optional<onednn::Int8Requant> rq = u8_requant_readers(g_, *reader->first);
  const DType low = rq ? DType::u8 : bf16_readers_only(*reader->first) ? DType::bf16 : DType::f32;
  Result<Made> made = made_in_low_or_f32(low, step_outs, [&](DType dst) {
    return concat_affine_step(
        {n, ops, out_dims, opt_.blocked_layouts, opt_.isa, dst, {}, opt_.conv_algorithm, dst == DType::u8 ? &*rq : nullptr},
        reader->second);
  });
  if (!made.ok()) {
    if (made.status().code() == StatusCode::kUnsupported) return false;
    return std::move(made).status().with_context("node " + n.describe());
  }
  FERRY_TRY(schedule_made(std::move(made).value(), ins, n, step_outs, false, reader->first->output(0)));
  if (step_outs[0].dtype == DType::u8) requant_slots_[slot_of_.at(reader->first->output(0))] = *rq;
  fused_away_.insert(reader->first);
  return true;
}

Result<bool> Scheduler::schedule_steps(const Node& n) {
  if (fast_ && try_requantized(n)) return true;  // before inference: its input slot holds u8
  if (fused_away_.count(&n)) return true;        // its output's slot is written (try_concat_affine)
  std::vector<OutputInfo>& outs = node_outs_;
  outs.clear();
  FERRY_ASSIGN_OR_RETURN(Facts facts, infer_or_fold(n, &outs));
  if (facts == Facts::kDataDependent) return false;
  if (facts == Facts::kFolded) return true;
  // If / Loop / Scan end the segment: the session runs their subgraphs as nested sessions.
  if (fast_ && has_subgraphs(n)) return false;
  std::vector<int> ins(n.num_inputs(), -1);
  for (size_t i = 0; i < n.num_inputs(); ++i)
    if (n.input(i)) ins[i] = slot_for(n.input(i));
  node_slots_ = ins;
  serial_ = fast_ && node_runs_serial(sig_, n, ins, outs);
  const ScopedOmpThreads threads(serial_ ? 1 : 0);
  // A kernel override (a plugin, ops/registry.h) takes its op's nodes before the step table does.
  const bool overridden =
      fast_ && !ins.empty() && ins[0] >= 0 && kernel_override(n.op(), sig_.slots[size_t(ins[0])].dtype);
  if (fast_ && !overridden) {
    FERRY_ASSIGN_OR_RETURN(bool int8, try_int8(n, ins, outs));
    if (int8) return true;
    FERRY_ASSIGN_OR_RETURN(bool mul8, try_requantized_mul(n, ins, outs));
    if (mul8) return true;
    FERRY_ASSIGN_OR_RETURN(bool dyn8, try_dynamic_int8_matmul(n, ins, outs));
    if (dyn8) return true;
    FERRY_ASSIGN_OR_RETURN(bool bf16, try_bf16(n, ins, outs));
    if (bf16) return true;
    if (try_transpose_view(n, ins, outs) || try_gather_view(n, ins, outs)) return true;
    FERRY_ASSIGN_OR_RETURN(bool affine, try_concat_affine(n, ins, outs));
    if (affine) return true;
    FERRY_ASSIGN_OR_RETURN(bool done, try_step_table(n, ins, outs));
    if (done || try_view(n, ins, outs)) return true;
  }
  FERRY_TRY(schedule_kernel(n, std::move(ins), outs));
  return true;
}

Status Scheduler::carry_from(const std::vector<const Node*>& order, size_t end) {
  std::vector<const Value*> needed;  // in first-use order, so the next segment's inputs are always the same
  std::unordered_map<const Value*, bool> seen;
  auto need = [&](const Value* v) {
    if (v && !v->is_constant() && !seen[v]) needed.push_back(v), seen[v] = true;
  };
  for (size_t k = end; k < order.size(); ++k)
    for (const Value* v : order[k]->inputs()) need(v);
  for (const Value* v : g_.outputs()) need(v);
  for (const Value* v : needed) {
    auto it = slot_of_.find(v);
    if (it == slot_of_.end()) continue;  // computed later (or a constant)
    if (requant_slots_.count(it->second) && v->dtype() == DType::f32)  // y itself was never written in f32
      return internal_error("the segment ends between the node writing '" + v->name() +
                            "' requantized and its QuantizeLinear readers");
    FERRY_ASSIGN_OR_RETURN(int s, plain_slot(it->second));
    if (sig_.slots[size_t(s)].dtype != v->dtype()) {  // a bf16 step's bf16 output: the next segment reads f32
      FERRY_ASSIGN_OR_RETURN(s, in_layout(s, onednn::plain_desc(v->dtype(), sig_.slots[size_t(s)].dims), v->dtype()));
    }
    sig_.carried.push_back(v);
    sig_.carried_slots.push_back(s);
  }
  return Status::Ok();
}

Status Scheduler::finish_outputs() {
  for (const Value* v : g_.outputs()) {
    int s = slot_for(v);
    if (s < 0) return internal_error("graph output '" + v->name() + "' was not computed");
    FERRY_ASSIGN_OR_RETURN(s, plain_slot(s));
    sig_.output_slots.push_back(s);
  }
  return Status::Ok();
}

}  // namespace

bool Slot::plain() const { return slot_is_plain(*this); }

std::string dims_text(DType t, const std::vector<int64_t>& d) {
  std::string s = std::string(dtype_name(t)) + "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

Result<std::unique_ptr<CpuSession::Signature>> schedule_signature(const Graph& g, const std::vector<const Node*>& order,
                                                                  size_t begin, const std::vector<const Value*>& inputs,
                                                                  const std::vector<std::vector<int64_t>>& dims,
                                                                  const SessionOptions& options) {
  auto sig = std::make_unique<CpuSession::Signature>();
  sig->begin = begin;
  sig->inputs = inputs;
  sig->dims = dims;
  Scheduler s(g, *sig, options);
  s.add_inputs(inputs, dims);
  size_t k = begin;
  for (; k < order.size(); ++k) {
    s.set_next(k + 1 < order.size() ? order[k + 1] : nullptr);
    FERRY_ASSIGN_OR_RETURN(bool scheduled, s.schedule(*order[k]));
    if (!scheduled) break;
  }
  sig->end = k;
  if (k < order.size()) {
    sig->dynamic = order[k];
    sig->info.runtime_planned_from = order[k]->name();
    FERRY_TRY(s.carry_from(order, k));
  } else {
    FERRY_TRY(s.finish_outputs());
  }
  return sig;
}

}  // namespace ferry
