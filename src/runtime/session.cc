#include "runtime/session.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>
#include <unordered_map>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/silu.h"
#include "backends/cpu/native/strided_copy.h"
#include "backends/cpu/onednn/onednn_steps.h"
#include "ops/registry.h"
#include "planner/memory_plan.h"
#include "runtime/interpreter.h"
#include "runtime/lower_fused_ops.h"

namespace ferry {

using onednn::Made;
using onednn::Operand;
using onednn::PostOp;
using dnnl::memory;

namespace {

/// Largest per-signature value the reshape step evaluates ahead of time.
constexpr size_t kMaxFoldBytes = size_t(64) << 20;

std::string dims_text(DType t, const std::vector<int64_t>& d) {
  std::string s = std::string(dtype_name(t)) + "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

bool is_view_op(Op op) {
  return op == Op::Reshape || op == Op::Flatten || op == Op::Squeeze || op == Op::Unsqueeze || op == Op::Identity;
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
      return Status::Ok();
    }

   private:
    const FnStep& s_;
    StepIO* io_;
    std::vector<Tensor> outs_;
    KernelContext ctx_;
  };
  const Node& node_;
  KernelFn fn_;
  std::string name_;
  bool reference_;
  bool in_place_;
};

}  // namespace

// --- compiled state ---------------------------------------------------------

/// An anchor (Conv / MatMul) and the elementwise nodes folded into its epilogue.
struct Group {
  const Node* anchor = nullptr;
  std::vector<const Node*> absorbed;  ///< in chain order
};

struct CpuSession::Compiled {
  std::vector<const Node*> order;
  std::unordered_map<const Node*, int> group_of_last;    ///< last absorbed node -> group
  std::unordered_map<const Node*, int> group_member;     ///< anchor and absorbed -> group
  std::vector<Group> groups;
  /// SiLU pairs: Mul(x, Sigmoid(x)) -> x, and the Sigmoid nodes they absorb (one step, native/silu.h).
  std::unordered_map<const Node*, const Node*> silu_sigmoid_of_mul;
  std::unordered_map<const Node*, const Node*> silu_mul_of_sigmoid;
};

// --- per-signature state ----------------------------------------------------

struct Slot {
  enum Kind { kInput, kConstant, kKnown, kArena } kind = kArena;
  DType dtype = DType::undefined;
  std::vector<int64_t> dims;
  memory::desc layout;
  int input_index = -1;
  const Tensor* data = nullptr;  ///< kConstant: the graph's constant
  Tensor known;                  ///< kKnown: evaluated at reshape
  size_t bytes = 0;
  int buffer = -1;               ///< kArena: planner buffer
  std::map<std::string, int> reorders;  ///< layout key -> slot holding this value in that layout
  const Tensor* known_tensor() const { return kind == kConstant ? data : kind == kKnown ? &known : nullptr; }
};

struct PlannedStep {
  std::unique_ptr<Step> step;
  std::vector<int> ins;   ///< slot per StepIO input (-1: omitted)
  std::vector<int> outs;
  StepInfo info;
};

struct CpuSession::Context {
  std::shared_ptr<Buffer> arena;
  std::vector<Tensor> tensors;  ///< per slot
  std::vector<StepIO> ios;      ///< per step
  std::vector<std::unique_ptr<BoundStep>> bound;
};

struct CpuSession::Signature {
  std::vector<std::vector<int64_t>> dims;
  std::deque<Slot> slots;  ///< a deque: pointers to slots (and their known tensors) stay valid as it grows
  std::vector<PlannedStep> steps;
  std::vector<int> input_slots;
  std::vector<int> output_slots;
  std::vector<BufferLifetime> buffers;
  MemoryPlan plan;
  size_t scratch = 0;
  PlanInfo info;
  std::mutex mu;
  std::vector<std::unique_ptr<Context>> free_contexts;
};

namespace {

std::string layout_key(const memory::desc& md) {
  return std::string(reinterpret_cast<const char*>(&md.data), sizeof(md.data));
}

/// Reshape-time builder for one signature.
class Planner {
 public:
  Planner(CpuSession::Signature& sig, const SessionOptions& opt) : sig_(sig), opt_(opt) {}

  int add_slot(Slot s) {
    if (s.bytes == 0) s.bytes = size_t(std::max<int64_t>(1, numel(s.dims))) * dtype_size(s.dtype);
    sig_.slots.push_back(std::move(s));
    return int(sig_.slots.size()) - 1;
  }
  static int64_t numel(const std::vector<int64_t>& d) {
    int64_t n = 1;
    for (int64_t x : d) n *= x;
    return n;
  }
  static memory::desc plain(const Slot& s) {
    auto t = onednn::dnnl_type(s.dtype);
    return t ? onednn::plain_desc(s.dtype, s.dims) : memory::desc();
  }
  static bool slot_is_plain(const Slot& s) { return s.layout.is_zero() || onednn::is_plain(s.layout); }

  /// The slot holding `slot`'s value in layout `want` (reorders once and caches).
  Result<int> in_layout(int slot, const memory::desc& want) {
    Slot& s = sig_.slots[size_t(slot)];
    if (s.layout.is_zero() ? onednn::is_plain(want) : s.layout == want) return slot;
    const std::string key = layout_key(want);
    if (auto it = s.reorders.find(key); it != s.reorders.end()) return it->second;
    memory::desc from = s.layout.is_zero() ? plain(s) : s.layout;
    Made made;
    // Between two dense unblocked layouts (NCHW <-> NHWC): own strided copy, faster than oneDNN's here.
    auto fs = onednn::dense_strides(from), ws = onednn::dense_strides(want);
    if (fs && ws && !opt_.reference_kernels)
      made.step = make_strided_copy_step(s.dims, *fs, *ws, dtype_size(s.dtype),
                                         "strided_copy_" + onednn::layout_name(from) + "_to_" + onednn::layout_name(want));
    if (!made.step) { FERRY_ASSIGN_OR_RETURN(made, onednn::make_reorder(from, want)); }
    Slot r;
    r.dtype = s.dtype;
    r.dims = s.dims;
    r.layout = want;
    r.bytes = want.get_size();
    const std::string shapes = dims_text(s.dtype, s.dims);
    int rs = add_slot(std::move(r));  // invalidates `s`
    PlannedStep ps;
    ps.ins = {slot};
    ps.outs = {rs};
    ps.info = {"(reorder)", "Reorder", made.step->kernel_name(), shapes};
    ps.step = std::move(made.step);
    sig_.steps.push_back(std::move(ps));
    sig_.slots[size_t(slot)].reorders[key] = rs;
    return rs;
  }
  Result<int> plain_slot(int slot) {
    const Slot& s = sig_.slots[size_t(slot)];
    if (slot_is_plain(s)) return slot;
    return in_layout(slot, plain(s));
  }

  CpuSession::Signature& sig_;
  const SessionOptions& opt_;
};

}  // namespace

Result<std::unique_ptr<CpuSession>> CpuSession::compile(std::unique_ptr<Graph> graph, const SessionOptions& options) {
  std::unique_ptr<CpuSession> s(new CpuSession());
  s->graph_ = std::move(graph);
  s->options_ = options;
  s->threads_ = options.threads > 0 ? options.threads : std::max(1, int(std::thread::hardware_concurrency()));
  register_cpu_kernels();
  auto c = std::make_unique<Compiled>();
  // The optimizer's fused ops: core op + epilogue nodes, which the grouping below folds back
  // into oneDNN post-ops where that is exact (runtime/lower_fused_ops.h).
  if (!options.reference_kernels) {
    FERRY_ASSIGN_OR_RETURN(int lowered, lower_fused_ops(*s->graph_));
    (void)lowered;
  }
  FERRY_ASSIGN_OR_RETURN(auto order, s->graph_->topo_order());
  c->order.assign(order.begin(), order.end());

  if (!options.reference_kernels) {
    // SiLU: Sigmoid(x) used only by Mul(x, Sigmoid(x)) (either operand order).
    const Graph& g = *s->graph_;
    for (const Node* n : c->order) {
      if (n->op() != Op::Sigmoid || !n->input(0) || n->output(0)->dtype() != DType::f32) continue;
      const Value* sig = n->output(0);
      if (sig->uses().size() != 1 || g.is_graph_output(sig)) continue;
      const Node* mul = sig->uses()[0].node;
      if (mul->op() != Op::Mul || mul->num_inputs() != 2) continue;
      const Value* other = mul->input(0) == sig ? mul->input(1) : mul->input(0);
      if (other != n->input(0) || mul->input(0) == mul->input(1)) continue;
      c->silu_sigmoid_of_mul[mul] = n;
      c->silu_mul_of_sigmoid[n] = mul;
    }
  }
  if (options.fuse_epilogues && !options.reference_kernels) {
    const Graph& g = *s->graph_;
    auto single_user = [&](const Value* v) -> Node* {
      if (v->uses().size() != 1 || g.is_graph_output(v)) return nullptr;
      return v->uses()[0].node;
    };
    for (const Node* n : c->order) {
      if ((n->op() != Op::Conv && n->op() != Op::MatMul) || n->output(0)->dtype() != DType::f32) continue;
      if (n->op() == Op::Conv && (!n->input(1)->is_constant() || (n->has_input(2) && !n->input(2)->is_constant())))
        continue;
      Group grp{n, {}};
      const Value* cur = n->output(0);
      for (;;) {
        Node* u = single_user(cur);
        if (!u || u->num_outputs() != 1 || c->group_member.count(u)) break;  // e.g. an Add two convs feed
        if (c->silu_mul_of_sigmoid.count(u) || c->silu_sigmoid_of_mul.count(u)) break;
        std::vector<const Tensor*> consts;
        for (const Value* v : u->inputs()) consts.push_back(v && v->is_constant() ? v->constant() : nullptr);
        // oneDNN's fused transcendental post-ops (logistic, tanh, gelu) trade accuracy for speed;
        // piecewise-linear ones are exact. Only the latter fold in unless allowed.
        const bool transcendental = u->op() == Op::Sigmoid || u->op() == Op::Tanh || u->op() == Op::Gelu ||
                                    u->op() == Op::Elu;
        if (onednn::eltwise_post_ops(*u, consts) && u->input(0) == cur &&
            (!transcendental || options.fuse_transcendental)) {
          grp.absorbed.push_back(u);
        } else if (u->op() == Op::Add && u->input(0) && u->input(1) && u->input(0) != u->input(1)) {
          grp.absorbed.push_back(u);
        } else {
          break;
        }
        cur = u->output(0);
      }
      if (grp.absorbed.empty()) continue;
      int id = int(c->groups.size());
      c->groups.push_back(grp);
      c->group_member[n] = id;
      for (const Node* a : grp.absorbed) c->group_member[a] = id;
      c->group_of_last[grp.absorbed.back()] = id;
    }
  }
  s->compiled_ = std::move(c);
  return s;
}

CpuSession::~CpuSession() = default;

const std::vector<std::string>& cpu_session_skipped_passes() {
  static const std::vector<std::string> passes = {};  // Gelu, RMSNormalization, Attention: kernels.def rows
  return passes;
}

Result<std::unique_ptr<CpuSession::Signature>> CpuSession::reshape(const std::vector<std::vector<int64_t>>& dims) {
  auto sig = std::make_unique<Signature>();
  sig->dims = dims;
  Planner P(*sig, options_);
  const Graph& g = *graph_;
  std::unordered_map<const Value*, int> slot_of;

  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* v = g.inputs()[i];
    Slot s;
    s.kind = Slot::kInput;
    s.dtype = v->dtype();
    s.dims = dims[i];
    s.input_index = int(i);
    int id = P.add_slot(std::move(s));
    slot_of[v] = id;
    sig->input_slots.push_back(id);
  }
  auto slot_for = [&](const Value* v) -> int {
    if (auto it = slot_of.find(v); it != slot_of.end()) return it->second;
    if (v->is_constant()) {
      Slot s;
      s.kind = Slot::kConstant;
      s.dtype = v->constant()->dtype();
      s.dims = v->constant()->dims();
      s.data = v->constant();
      int id = P.add_slot(std::move(s));
      slot_of[v] = id;
      return id;
    }
    return -1;
  };

  const bool fast = !options_.reference_kernels;

  // Infers node outputs; registers their slots. Returns false when every input is known and the node was folded.
  auto infer_and_fold = [&](const Node* n, std::vector<OutputInfo>* outs) -> Result<bool> {
    std::vector<InputInfo> infos(n->num_inputs());
    bool all_known = n->num_inputs() > 0;
    std::vector<const Tensor*> known(n->num_inputs(), nullptr);
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      const Value* v = n->input(i);
      if (!v) continue;
      int id = slot_for(v);
      if (id < 0) return internal_error("node " + n->describe() + ": input '" + v->name() + "' is not computed");
      const Slot& s = sig->slots[size_t(id)];
      known[i] = s.known_tensor();
      all_known &= known[i] != nullptr;
      infos[i] = {s.dtype, Shape::from_dims(s.dims), known[i]};
    }
    FERRY_TRY(infer_node(*n, infos, outs).with_context("node " + n->describe()));
    // Refuse absurd outputs here, naming the node, before the planner sums them into one arena.
    for (const OutputInfo& o : *outs) {
      if (!o.shape.is_static()) continue;
      std::optional<int64_t> numel = checked_numel(o.shape.static_dims());
      const size_t limit = tensor_size_limit();
      if (!numel || size_t(*numel) > limit / std::max<size_t>(1, dtype_size(o.dtype)))
        return invalid_model("node " + n->describe() + ": output " + o.shape.to_string() +
                             " exceeds the tensor size limit of " + std::to_string(limit) + " bytes");
    }
    if ((n->op() == Op::Shape || n->op() == Op::Size) && n->input(0)) {
      // Known from the input's dims alone: the root of every shape subgraph.
      const std::vector<int64_t>& d = sig->slots[size_t(slot_for(n->input(0)))].dims;
      Tensor t;
      if (n->op() == Op::Size) {
        t = Tensor::scalar<int64_t>(Planner::numel(d));
      } else {
        const int64_t r = int64_t(d.size());
        auto norm = [&](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t(0), r); };
        int64_t start = norm(n->attr_int("start")), end = n->has_attr("end") ? norm(n->attr_int("end")) : r;
        std::vector<int64_t> v(d.begin() + start, d.begin() + std::max(start, end));
        t = Tensor::from_vector<int64_t>(v, {int64_t(v.size())});
      }
      Slot ks;
      ks.kind = Slot::kKnown;
      ks.dtype = DType::i64;
      ks.dims = t.dims();
      ks.known = std::move(t);
      slot_of[n->output(0)] = P.add_slot(std::move(ks));
      ++sig->info.folded;
      return false;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < outs->size(); ++i) {
      const OutputInfo& o = (*outs)[i];
      if (!o.shape.is_static() || o.dtype == DType::undefined)
        return unsupported("node " + n->describe() + ": output " + std::to_string(i) +
                           " has a data-dependent shape (" + o.shape.to_string() + ")");
      bytes += size_t(Planner::numel(o.shape.static_dims())) * dtype_size(o.dtype);
    }
    if (!all_known || bytes > kMaxFoldBytes) return true;
    std::vector<Tensor> results(outs->size());
    for (size_t i = 0; i < results.size(); ++i) {
      FERRY_ASSIGN_OR_RETURN(results[i], Tensor::zeros((*outs)[i].dtype, (*outs)[i].shape.static_dims()));
    }
    KernelContext kctx(*n, known, &results);
    FERRY_TRY(op_reference_kernel(n->op())(kctx).with_context("evaluating node " + n->describe()));
    for (size_t i = 0; i < results.size(); ++i) {
      Slot s;
      s.kind = Slot::kKnown;
      s.dtype = results[i].dtype();
      s.dims = results[i].dims();
      s.known = std::move(results[i]);
      slot_of[n->output(i)] = P.add_slot(std::move(s));
    }
    ++sig->info.folded;
    return false;
  };

  auto new_out_slot = [&](const Value* v, const OutputInfo& o, const memory::desc& layout) {
    Slot s;
    s.dtype = o.dtype;
    s.dims = o.shape.static_dims();
    if (!layout.is_zero() && !onednn::is_plain(layout)) {
      s.layout = layout;
      s.bytes = layout.get_size();
    }
    int id = P.add_slot(std::move(s));
    slot_of[v] = id;
    return id;
  };

  auto operand_of = [&](int slot) {
    Operand o;
    if (slot < 0) return o;
    const Slot& s = sig->slots[size_t(slot)];
    o.dtype = s.dtype;
    o.dims = s.dims;
    o.layout = s.layout.is_zero() ? Planner::plain(s) : s.layout;
    o.constant = s.known_tensor();
    return o;
  };

  // Schedules a oneDNN step: reorders operands to the layouts it wants.
  auto schedule_made = [&](Made made, std::vector<int> ins, const std::vector<const Node*>& nodes,
                           const std::vector<OutputInfo>& out_info) -> Status {
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i] >= 0 && i < made.want.size() && made.want[i]) {
        FERRY_ASSIGN_OR_RETURN(ins[i], P.in_layout(ins[i], *made.want[i]));
      }
    const Node* last = nodes.back();
    PlannedStep ps;
    ps.ins = std::move(ins);
    ps.outs.push_back(new_out_slot(last->output(0), out_info[0], made.out));
    std::string names, ops;
    for (const Node* n : nodes) {
      names += (names.empty() ? "" : "+") + n->name();
      ops += (ops.empty() ? "" : "+") + std::string(op_name(n->op()));
    }
    std::string shapes;
    for (int s : ps.ins)
      if (s >= 0) shapes += (shapes.empty() ? "" : ", ") + dims_text(sig->slots[size_t(s)].dtype, sig->slots[size_t(s)].dims);
    const Slot& o = sig->slots[size_t(ps.outs[0])];
    ps.info = {names, ops, made.step->kernel_name(), shapes + " -> " + dims_text(o.dtype, o.dims)};
    ps.step = std::move(made.step);
    sig->steps.push_back(std::move(ps));
    return Status::Ok();
  };

  // One node on a oneDNN step, own kernel or reference kernel.
  auto schedule_single = [&](const Node* n, const std::vector<OutputInfo>& outs) -> Status {
    std::vector<int> ins(n->num_inputs(), -1);
    for (size_t i = 0; i < n->num_inputs(); ++i)
      if (n->input(i)) ins[i] = slot_for(n->input(i));
    std::vector<Operand> ops;
    for (int s : ins) ops.push_back(operand_of(s));
    bool extra_outputs_used = false;  // oneDNN steps write output 0 only
    for (size_t i = 1; i < n->num_outputs(); ++i)
      extra_outputs_used |= !n->output(i)->uses().empty() || g.is_graph_output(n->output(i));
    if (fast && n->num_outputs() >= 1 && outs[0].dtype == DType::f32 && !extra_outputs_used) {
      Result<Made> made = unsupported("");
      switch (n->op()) {
        case Op::Conv: made = onednn::make_conv(*n, ops, {}, outs[0].shape.static_dims(), options_.blocked_layouts); break;
        case Op::MatMul: made = onednn::make_matmul(ops, {}, outs[0].shape.static_dims()); break;
        case Op::MaxPool:
        case Op::AveragePool:
        case Op::GlobalAveragePool:
        case Op::GlobalMaxPool:
          made = onednn::make_pool(*n, ops, outs[0].shape.static_dims(), options_.blocked_layouts);
          break;
        case Op::Softmax: made = onednn::make_softmax(*n, ops); break;
        case Op::LayerNormalization: made = onednn::make_layer_norm(*n, ops); break;
        case Op::Add:
        case Op::Sub:
        case Op::Mul:
        case Op::Div:
        case Op::Max:
        case Op::Min:
          // Own kernels handle plain tensors; oneDNN keeps blocked ones blocked.
          if (n->num_inputs() == 2 && (!P.slot_is_plain(sig->slots[size_t(ins[0])]) ||
                                       (ins[1] >= 0 && !P.slot_is_plain(sig->slots[size_t(ins[1])]))))
            made = onednn::make_binary(*n, ops, outs[0].shape.static_dims());
          break;
        default: {
          std::vector<const Tensor*> consts;
          for (const Operand& o : ops) consts.push_back(o.constant);
          auto post = onednn::eltwise_post_ops(*n, consts);
          if (post && n->op() != Op::Mul && n->op() != Op::Add && !ins.empty() && ins[0] >= 0 &&
              !P.slot_is_plain(sig->slots[size_t(ins[0])]))
            made = onednn::make_eltwise({ops[0]}, *post);
          break;
        }
      }
      if (made.ok()) {
        if (n->num_outputs() > 1)  // e.g. LayerNormalization's unused statistics: plain zeros
          for (size_t i = 1; i < n->num_outputs(); ++i) new_out_slot(n->output(i), outs[i], {});
        std::vector<int> step_ins = ins;
        if (n->op() == Op::LayerNormalization || n->op() == Op::Softmax) step_ins.resize(1);
        return schedule_made(std::move(made).value(), step_ins, {n}, outs);
      }
      // Reshape-like node on an arena value: a view, no step.
      if (is_view_op(n->op()) && ins[0] >= 0 && sig->slots[size_t(ins[0])].kind == Slot::kArena) {
        FERRY_ASSIGN_OR_RETURN(int src, P.plain_slot(ins[0]));
        Slot v;
        v.dtype = outs[0].dtype;
        v.dims = outs[0].shape.static_dims();
        v.buffer = -2 - src;  // resolved to the source's buffer when planning
        slot_of[n->output(0)] = P.add_slot(std::move(v));
        ++sig->info.views;
        return Status::Ok();
      }
    }
    // Own kernel or reference kernel, plain layouts.
    for (int& s : ins) {
      if (s >= 0) { FERRY_ASSIGN_OR_RETURN(s, P.plain_slot(s)); }
    }
    const KernelEntry* k = nullptr;
    if (fast && n->num_inputs() > 0 && ins[0] >= 0) k = select_kernel(n->op(), sig->slots[size_t(ins[0])].dtype, host_isa());
    PlannedStep ps;
    ps.ins = ins;
    for (size_t i = 0; i < n->num_outputs(); ++i) ps.outs.push_back(new_out_slot(n->output(i), outs[i], {}));
    std::string shapes;
    for (int s : ins)
      if (s >= 0) shapes += (shapes.empty() ? "" : ", ") + dims_text(sig->slots[size_t(s)].dtype, sig->slots[size_t(s)].dims);
    shapes += " ->";
    for (int s : ps.outs) shapes += " " + dims_text(sig->slots[size_t(s)].dtype, sig->slots[size_t(s)].dims);
    if (k)
      ps.step = std::make_unique<FnStep>(*n, k->fn, k->name, false, k->in_place);
    else
      ps.step = std::make_unique<FnStep>(*n, op_reference_kernel(n->op()),
                                         std::string("ref_") + op_name(n->op()), true, false);
    ps.info = {n->name(), op_name(n->op()), ps.step->kernel_name(), shapes};
    sig->steps.push_back(std::move(ps));
    return Status::Ok();
  };

  // A fused group: anchor + epilogue, or each node alone when oneDNN refuses.
  auto schedule_group = [&](const Group& grp) -> Status {
    std::vector<std::vector<OutputInfo>> outs;
    std::vector<const Node*> nodes{grp.anchor};
    nodes.insert(nodes.end(), grp.absorbed.begin(), grp.absorbed.end());
    // Infer every member in chain order; members' outputs get provisional slots for inference only.
    bool ok = true;
    std::vector<int> ins;
    std::vector<Operand> ops;
    std::vector<PostOp> post;
    const Node* a = grp.anchor;
    for (size_t i = 0; i < a->num_inputs(); ++i) ins.push_back(a->input(i) ? slot_for(a->input(i)) : -1);
    std::unordered_map<const Value*, int> provisional;
    const Value* cur = a->output(0);
    for (const Node* n : nodes) {
      std::vector<OutputInfo> o;
      FERRY_ASSIGN_OR_RETURN(bool run_time, infer_and_fold(n, &o));
      if (!run_time) return internal_error("fused node " + n->describe() + " folded at reshape");
      if (o[0].dtype != DType::f32) ok = false;
      outs.push_back(o);
      // Provisional slot so the next member's inference sees this output.
      Slot s;
      s.dtype = o[0].dtype;
      s.dims = o[0].shape.static_dims();
      int id = P.add_slot(std::move(s));
      slot_of[n->output(0)] = id;
      provisional[n->output(0)] = id;
    }
    const std::vector<int64_t> out_dims = outs.back()[0].shape.static_dims();
    for (int s : ins) ops.push_back(operand_of(s));
    for (size_t k = 0; ok && k < grp.absorbed.size(); ++k) {
      const Node* u = grp.absorbed[k];
      std::vector<const Tensor*> consts;
      for (const Value* v : u->inputs()) {
        int s = v ? slot_for(v) : -1;
        consts.push_back(s >= 0 ? sig->slots[size_t(s)].known_tensor() : nullptr);
      }
      auto elt = onednn::eltwise_post_ops(*u, consts);
      if (elt && u->input(0) == cur) {
        post.insert(post.end(), elt->begin(), elt->end());
      } else if (u->op() == Op::Add) {
        const Value* other = u->input(0) == cur ? u->input(1) : u->input(0);
        int s = slot_for(other);
        if (s < 0 || provisional.count(other)) { ok = false; break; }
        ins.push_back(s);
        ops.push_back(operand_of(s));
        // Same shape as the output: accumulate onto it (sum); else a broadcast binary add.
        const bool same = ops.back().dims == outs[0][0].shape.static_dims() && !ops.back().constant;
        post.push_back({same ? PostOp::kSum : PostOp::kBinary, dnnl::algorithm::binary_add, 0.f, 0.f,
                        int(ops.size()) - 1});
      } else {
        ok = false;
      }
      cur = u->output(0);
    }
    // Shapes must not change along the chain (no broadcasting the accumulator up).
    for (const auto& o : outs) ok &= o[0].shape.static_dims() == outs[0][0].shape.static_dims();
    if (ok) {
      Result<Made> made = a->op() == Op::Conv
                              ? onednn::make_conv(*a, ops, post, out_dims, options_.blocked_layouts)
                              : onednn::make_matmul(ops, post, out_dims);
      if (made.ok()) {
        for (auto& [v, id] : provisional) slot_of.erase(v);
        return schedule_made(std::move(made).value(), ins, nodes, outs.back());
      }
    }
    // Fall back: every member alone, in chain order.
    for (auto& [v, id] : provisional) slot_of.erase(v);
    for (size_t k = 0; k < nodes.size(); ++k) FERRY_TRY(schedule_single(nodes[k], outs[k]));
    return Status::Ok();
  };

  // SiLU pair: one in-place step on x's layout; else (x not a planned f32 value) both nodes alone.
  auto schedule_silu = [&](const Node* sigmoid, const Node* mul) -> Status {
    const int xs = slot_for(sigmoid->input(0));
    if (xs < 0) return internal_error("node " + sigmoid->describe() + ": input is not computed");
    const Slot& x = sig->slots[size_t(xs)];
    std::unique_ptr<Step> step;
    if (x.kind == Slot::kArena && x.dtype == DType::f32) step = make_silu_step(int64_t(x.bytes / sizeof(float)), host_isa());
    if (!step) {
      for (const Node* n : {sigmoid, mul}) {
        std::vector<OutputInfo> outs;
        FERRY_ASSIGN_OR_RETURN(bool run_time, infer_and_fold(n, &outs));
        if (run_time) FERRY_TRY(schedule_single(n, outs));
      }
      return Status::Ok();
    }
    Slot y;
    y.dtype = x.dtype;
    y.dims = x.dims;
    y.layout = x.layout;
    y.bytes = x.bytes;
    const std::string shapes = dims_text(x.dtype, x.dims);
    PlannedStep ps;
    ps.ins = {xs};
    ps.outs = {P.add_slot(std::move(y))};  // invalidates `x`
    slot_of[mul->output(0)] = ps.outs[0];
    ps.info = {sigmoid->name() + "+" + mul->name(), "Sigmoid+Mul", step->kernel_name(), shapes + " -> " + shapes};
    ps.step = std::move(step);
    sig->steps.push_back(std::move(ps));
    return Status::Ok();
  };

  for (const Node* n : compiled_->order) {
    if (compiled_->silu_mul_of_sigmoid.count(n)) continue;  // scheduled with its Mul
    if (auto it = compiled_->silu_sigmoid_of_mul.find(n); it != compiled_->silu_sigmoid_of_mul.end()) {
      FERRY_TRY(schedule_silu(it->second, n));
      continue;
    }
    if (auto it = compiled_->group_member.find(n); it != compiled_->group_member.end()) {
      auto last = compiled_->group_of_last.find(n);
      if (last != compiled_->group_of_last.end()) FERRY_TRY(schedule_group(compiled_->groups[size_t(last->second)]));
      continue;
    }
    std::vector<OutputInfo> outs;
    FERRY_ASSIGN_OR_RETURN(bool run_time, infer_and_fold(n, &outs));
    if (run_time) FERRY_TRY(schedule_single(n, outs));
  }

  // Graph outputs must be plain.
  for (const Value* v : g.outputs()) {
    int s = slot_for(v);
    if (s < 0) return internal_error("graph output '" + v->name() + "' was not computed");
    FERRY_ASSIGN_OR_RETURN(s, P.plain_slot(s));
    sig->output_slots.push_back(s);
  }

  // --- memory plan ---
  std::deque<Slot>& slots = sig->slots;
  const int nsteps = int(sig->steps.size());
  auto root = [&](int s) {  // views resolve to the slot that owns the memory
    while (slots[size_t(s)].buffer <= -2) s = -2 - slots[size_t(s)].buffer;
    return s;
  };
  std::vector<int> first(slots.size(), INT32_MAX), last(slots.size(), -1);
  for (int i = 0; i < nsteps; ++i) {
    for (int s : sig->steps[size_t(i)].ins)
      if (s >= 0) last[size_t(root(s))] = std::max(last[size_t(root(s))], i);
    for (int s : sig->steps[size_t(i)].outs) first[size_t(root(s))] = std::min(first[size_t(root(s))], i);
  }
  for (int s : sig->output_slots) last[size_t(root(s))] = nsteps;
  // In place: an elementwise step may write over its input when that input dies here.
  std::vector<int> alias(slots.size(), -1);  // arena slot -> slot whose memory it reuses
  for (int i = 0; i < nsteps && fast; ++i) {
    PlannedStep& ps = sig->steps[size_t(i)];
    const int k = ps.step->in_place_input();
    if (k < 0 || size_t(k) >= ps.ins.size() || ps.ins[size_t(k)] < 0 || ps.outs.size() != 1) continue;
    int in = root(ps.ins[size_t(k)]), out = ps.outs[0];
    if (slots[size_t(in)].kind != Slot::kArena || slots[size_t(out)].buffer <= -2) continue;
    if (last[size_t(in)] != i || slots[size_t(in)].bytes != slots[size_t(out)].bytes) continue;
    bool read_twice = false;
    for (size_t j = 0; j < ps.ins.size(); ++j) read_twice |= j != size_t(k) && ps.ins[j] >= 0 && root(ps.ins[j]) == in;
    if (read_twice) continue;
    slots[size_t(out)].buffer = -2 - in;  // becomes a view of its input
    last[size_t(in)] = std::max(last[size_t(in)], last[size_t(out)]);
    first[size_t(out)] = INT32_MAX;
    ++sig->info.in_place;
  }
  // Recompute lifetimes on roots after in-place merging.
  std::fill(first.begin(), first.end(), INT32_MAX);
  std::fill(last.begin(), last.end(), -1);
  for (int i = 0; i < nsteps; ++i) {
    for (int s : sig->steps[size_t(i)].ins)
      if (s >= 0) last[size_t(root(s))] = std::max(last[size_t(root(s))], i);
    for (int s : sig->steps[size_t(i)].outs) {
      first[size_t(root(s))] = std::min(first[size_t(root(s))], i);
      last[size_t(root(s))] = std::max(last[size_t(root(s))], i);
    }
  }
  for (int s : sig->output_slots) last[size_t(root(s))] = nsteps;
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].kind != Slot::kArena || slots[s].buffer <= -2) continue;
    if (first[s] == INT32_MAX && last[s] < 0) continue;  // never used (a fused chain's inner value)
    if (first[s] == INT32_MAX) return internal_error("a planned value is read but never written");
    slots[s].buffer = int(sig->buffers.size());
    sig->buffers.push_back({slots[s].bytes, first[s], std::max(first[s], last[s])});
  }
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].kind == Slot::kArena && slots[s].buffer <= -2 && slots[size_t(root(int(s)))].buffer >= 0) {
      slots[s].buffer = slots[size_t(root(int(s)))].buffer;
      if (slots[size_t(root(int(s)))].kind != Slot::kArena) return internal_error("view of a non-arena value");
    }
  sig->plan = plan_memory(sig->buffers);
  for (const PlannedStep& ps : sig->steps) sig->scratch = std::max(sig->scratch, ps.step->scratch_bytes());
  sig->info.arena_bytes = sig->plan.peak;
  sig->info.naive_bytes = sig->plan.naive;
  sig->info.scratch_bytes = sig->scratch;
  sig->info.num_buffers = sig->buffers.size();
  for (const PlannedStep& ps : sig->steps) sig->info.steps.push_back(ps.info);
  return sig;
}

Result<CpuSession::Signature*> CpuSession::signature_for(const std::vector<const std::vector<int64_t>*>& dims) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : signatures_) {
    bool same = s->dims.size() == dims.size();
    for (size_t i = 0; same && i < dims.size(); ++i) same = s->dims[i] == *dims[i];
    if (same) return s.get();
  }
  std::vector<std::vector<int64_t>> d;
  for (auto* p : dims) d.push_back(*p);
  FERRY_ASSIGN_OR_RETURN(auto sig, reshape(d));
  signatures_.push_back(std::move(sig));
  return signatures_.back().get();
}

namespace {

Result<std::unique_ptr<CpuSession::Context>> bind_context(CpuSession::Signature& sig) {
  auto ctx = std::make_unique<CpuSession::Context>();
  const size_t scratch_at = (sig.plan.peak + 63) / 64 * 64;
  FERRY_ASSIGN_OR_RETURN(ctx->arena, allocate_buffer(scratch_at + sig.scratch + 64));
  ctx->tensors.resize(sig.slots.size());
  for (size_t i = 0; i < sig.slots.size(); ++i) {
    const Slot& s = sig.slots[i];
    switch (s.kind) {
      case Slot::kInput: break;  // set per run
      case Slot::kConstant: ctx->tensors[i] = *s.data; break;
      case Slot::kKnown: ctx->tensors[i] = s.known; break;
      case Slot::kArena: {
        if (s.buffer < 0) break;  // unused (inner value of a fused chain)
        FERRY_ASSIGN_OR_RETURN(ctx->tensors[i],
                               Tensor::view(s.dtype, s.dims, ctx->arena, sig.plan.offsets[size_t(s.buffer)]));
        break;
      }
    }
  }
  ctx->ios.resize(sig.steps.size());
  for (size_t i = 0; i < sig.steps.size(); ++i) {
    const PlannedStep& ps = sig.steps[i];
    StepIO& io = ctx->ios[i];
    for (int s : ps.ins) io.inputs.push_back(s >= 0 ? &ctx->tensors[size_t(s)] : nullptr);
    for (int s : ps.outs) io.outputs.push_back(&ctx->tensors[size_t(s)]);
    io.scratch = ctx->arena->data() + scratch_at;
    FERRY_ASSIGN_OR_RETURN(auto b, ps.step->bind(&io));
    ctx->bound.push_back(std::move(b));
  }
  return ctx;
}

}  // namespace

Status CpuSession::run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, std::vector<double>* step_us) {
  const Graph& g = *graph_;
  if (inputs.size() != g.inputs().size())
    return invalid_argument("expected " + std::to_string(g.inputs().size()) + " inputs, got " +
                            std::to_string(inputs.size()));
  // Reused per thread: steady-state runs allocate nothing here.
  thread_local std::vector<const std::vector<int64_t>*> dims;
  dims.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    FERRY_TRY(check_input(*g.inputs()[i], inputs[i]));
    dims.push_back(&inputs[i].dims());
  }
  FERRY_ASSIGN_OR_RETURN(Signature * sig, signature_for(dims));
  std::unique_ptr<Context> ctx;
  {
    std::lock_guard<std::mutex> lock(sig->mu);
    if (!sig->free_contexts.empty()) {
      ctx = std::move(sig->free_contexts.back());
      sig->free_contexts.pop_back();
    }
  }
  if (!ctx) {
    FERRY_ASSIGN_OR_RETURN(ctx, bind_context(*sig));
  }
  for (size_t i = 0; i < inputs.size(); ++i) ctx->tensors[size_t(sig->input_slots[i])] = inputs[i];
  omp_set_num_threads(threads_);
  if (step_us) step_us->assign(ctx->bound.size(), 0.0);
  Status st;
  for (size_t i = 0; i < ctx->bound.size() && st.ok(); ++i) {
    if (step_us) {
      auto t0 = std::chrono::steady_clock::now();
      st = ctx->bound[i]->run();
      (*step_us)[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    } else {
      st = ctx->bound[i]->run();
    }
  }
  if (st.ok()) {
    outputs->resize(sig->output_slots.size());
    for (size_t i = 0; i < sig->output_slots.size(); ++i) {
      const Tensor& src = ctx->tensors[size_t(sig->output_slots[i])];
      Tensor& dst = (*outputs)[i];
      // Reuse the caller's tensor only when nobody else shares its buffer.
      bool reuse = dst.defined() && dst.dtype() == src.dtype() && dst.dims() == src.dims() &&
                   dst.buffer().use_count() == 1;
      if (!reuse) {
        auto t = Tensor::zeros(src.dtype(), src.dims());
        if (!t.ok()) { st = t.status(); break; }
        dst = std::move(t).value();
      }
      std::memcpy(dst.raw(), src.raw(), src.nbytes());
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) ctx->tensors[size_t(sig->input_slots[i])] = Tensor();
  {
    std::lock_guard<std::mutex> lock(sig->mu);
    sig->free_contexts.push_back(std::move(ctx));
  }
  return st;
}

Result<std::vector<Tensor>> CpuSession::run(const std::map<std::string, Tensor>& inputs) {
  std::vector<Tensor> ins;
  for (const Value* v : graph_->inputs()) {
    auto it = inputs.find(v->name());
    if (it == inputs.end()) return invalid_argument("missing input '" + v->name() + "'");
    ins.push_back(it->second);
  }
  for (const auto& [name, t] : inputs) {
    bool known = false;
    for (const Value* v : graph_->inputs()) known |= v->name() == name;
    if (!known) return invalid_argument("the model has no input named '" + name + "'");
  }
  std::vector<Tensor> outs;
  FERRY_TRY(run(ins, &outs));
  return outs;
}

Result<PlanInfo> CpuSession::plan_info(const std::vector<std::vector<int64_t>>& input_dims) {
  std::vector<const std::vector<int64_t>*> d;
  for (const auto& x : input_dims) d.push_back(&x);
  FERRY_ASSIGN_OR_RETURN(Signature * sig, signature_for(d));
  return sig->info;
}

}  // namespace ferry
