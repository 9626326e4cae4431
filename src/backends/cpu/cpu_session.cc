// backends/cpu/cpu_session.cc — CpuSession: compile, the signature cache, run.
// The per-signature stages are cpu_schedule.cc, cpu_liveness.cc and cpu_bind.cc.
#include "backends/cpu/cpu_session.h"

#include <omp.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_plan.h"
#include "backends/cpu/onednn/onednn_common.h"
#include "ir/graph_clone.h"
#include "ir/subgraph.h"
#include "ops/control_flow_util.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

/// `t` (held by `s`, possibly in a blocked layout) as a plain tensor of its own.
Result<Tensor> plain_copy(const Slot& s, const Tensor& t) {
  if (s.plain()) return t.clone();
  FERRY_ASSIGN_OR_RETURN(Tensor out, Tensor::zeros(s.dtype, s.dims));
  auto block = onednn::reorder_to(t.raw(), s.layout, onednn::plain_desc(s.dtype, s.dims));
  std::memcpy(out.raw(), block->data, out.nbytes());
  return out;
}

void fill_capture_lists(CpuSession::Signature& sig) {
  std::vector<int> step_of(sig.slots.size(), -1);
  sig.capture_after.assign(sig.steps.size(), {});
  for (size_t i = 0; i < sig.steps.size(); ++i)
    for (int s : sig.steps[i].outs) step_of[size_t(s)] = int(i);
  for (size_t s = 0; s < sig.slots.size(); ++s) {
    int producer = s < step_of.size() ? step_of[s] : -1;
    for (int v = int(s); producer < 0 && sig.slots[size_t(v)].view_of >= 0;) {
      v = sig.slots[size_t(v)].view_of;
      producer = step_of[size_t(v)];
    }
    if (producer >= 0 && sig.slots[s].value) sig.capture_after[size_t(producer)].push_back(int(s));
  }
}

/// Reports the values known before any step runs (inputs, folded shape values).
Status report_known(const CpuSession::Signature& sig, const CpuSession::Context& ctx, const RunObserver& obs) {
  for (size_t s = 0; s < sig.slots.size(); ++s) {
    const Slot& slot = sig.slots[s];
    if (slot.value && (slot.kind == Slot::kInput || slot.kind == Slot::kKnown)) obs.on_value(slot.value, ctx.tensors[s]);
  }
  return Status::Ok();
}

Status report_step(const CpuSession::Signature& sig, const CpuSession::Context& ctx, size_t step,
                   const RunObserver& obs) {
  for (int s : sig.capture_after[step]) {
    const Slot& slot = sig.slots[size_t(s)];
    if (!ctx.tensors[size_t(s)].defined()) continue;
    FERRY_ASSIGN_OR_RETURN(Tensor plain, plain_copy(slot, ctx.tensors[size_t(s)]));
    if (plain.dtype() == DType::bf16 && slot.value->dtype() == DType::f32) {  // a bf16 step's bf16 output
      Tensor f = Tensor::empty(DType::f32, plain.dims());
      for (int64_t i = 0; i < plain.numel(); ++i) f.data<float>()[i] = bf16_to_f32(plain.data<uint16_t>()[i]);
      plain = std::move(f);
    }
    obs.on_value(slot.value, plain);
  }
  return Status::Ok();
}

/// Whether the caller's tensor can take `slot`'s value in place: same type, and nobody else
/// holds its buffer (a tensor handed out by an earlier run, not shared since).
bool reusable(const Tensor& dst, const Slot& slot) {
  return dst.defined() && dst.dtype() == slot.dtype && dst.dims() == slot.dims && dst.buffer().use_count() == 1;
}

/// Points every direct output's slot at the caller's tensor (a new one unless reusable),
/// so the step that writes it writes there; what the slot held is parked meanwhile.
/// Copy-assignments into tensors of the same rank: steady-state runs allocate nothing.
Status lend_outputs(const CpuSession::Signature& sig, CpuSession::Context& ctx, std::vector<Tensor>* outputs) {
  outputs->resize(sig.output_slots.size());
  ctx.parked.resize(sig.output_slots.size());
  for (size_t i = 0; i < sig.output_slots.size(); ++i) {
    if (!sig.direct_outputs[i]) continue;
    const Slot& slot = sig.slots[size_t(sig.output_slots[i])];
    Tensor& dst = (*outputs)[i];
    if (!reusable(dst, slot)) {
      FERRY_ASSIGN_OR_RETURN(dst, Tensor::uninitialized(slot.dtype, slot.dims));
    }
    Tensor& t = ctx.tensors[size_t(sig.output_slots[i])];
    ctx.parked[i] = t;
    t = dst;
  }
  return Status::Ok();
}

/// Gives the direct outputs' slots back what they held (no buffer: they keep no reference to
/// the caller's tensors).
void return_outputs(const CpuSession::Signature& sig, CpuSession::Context& ctx) {
  for (size_t i = 0; i < ctx.parked.size(); ++i)
    if (sig.direct_outputs[i]) ctx.tensors[size_t(sig.output_slots[i])] = ctx.parked[i];
}

}  // namespace

Result<std::unique_ptr<CpuSession>> CpuSession::compile(std::shared_ptr<const Graph> graph,
                                                        const SessionOptions& options) {
  std::unique_ptr<CpuSession> s(new CpuSession());
  s->graph_ = std::move(graph);
  s->options_ = options;
  s->options_.isa = std::min(options.isa, host_isa());
  s->threads_ = options.threads > 0 ? options.threads : std::max(1, int(std::thread::hardware_concurrency()));
  register_cpu_kernels();
  FERRY_ASSIGN_OR_RETURN(auto order, s->graph_->topo_order());
  s->order_.assign(order.begin(), order.end());
  s->graph_inputs_.assign(s->graph_->inputs().begin(), s->graph_->inputs().end());
  return s;
}

CpuSession::~CpuSession() = default;

Result<std::shared_ptr<CpuSession::Signature>> CpuSession::signature_for(
    size_t begin, const std::vector<const Value*>& values, const std::vector<const std::vector<int64_t>*>& dims) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t k = 0; k < signatures_.size(); ++k) {
    const Signature& s = *signatures_[k];
    bool same = s.begin == begin && s.dims.size() == dims.size() && s.inputs == values;
    for (size_t i = 0; same && i < dims.size(); ++i) same = s.dims[i] == *dims[i];
    if (same) {
      last_used_[k] = ++clock_;
      return signatures_[k];
    }
  }
  std::vector<std::vector<int64_t>> d;
  for (auto* p : dims) d.push_back(*p);
  // oneDNN primitives keep the thread count they are made under (plan_info comes here without run()).
  omp_set_num_threads(threads_);
  FERRY_ASSIGN_OR_RETURN(auto sig, schedule_signature(*graph_, order_, begin, values, d, options_));
  FERRY_TRY(plan_signature_memory(*sig, !options_.reference_kernels));
  if (signatures_.size() >= kMaxSignatures) {
    size_t oldest = 0;
    for (size_t k = 1; k < last_used_.size(); ++k)
      if (last_used_[k] < last_used_[oldest]) oldest = k;
    signatures_.erase(signatures_.begin() + std::ptrdiff_t(oldest));
    last_used_.erase(last_used_.begin() + std::ptrdiff_t(oldest));
  }
  signatures_.push_back(std::shared_ptr<Signature>(std::move(sig)));
  last_used_.push_back(++clock_);
  return signatures_.back();
}

Status CpuSession::run_segment(Signature& sig, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs,
                               std::vector<Tensor>* carried, const RunObserver* observer) {
  std::unique_ptr<Context> ctx;
  {
    std::lock_guard<std::mutex> lock(sig.mu);
    if (!sig.free_contexts.empty()) {
      ctx = std::move(sig.free_contexts.back());
      sig.free_contexts.pop_back();
    }
  }
  if (!ctx) {
    FERRY_ASSIGN_OR_RETURN(ctx, bind_context(sig));
  }
  for (size_t i = 0; i < inputs.size(); ++i) ctx->tensors[size_t(sig.input_slots[i])] = inputs[i];
  Status st = sig.dynamic ? Status::Ok() : lend_outputs(sig, *ctx, outputs);
  const bool capture = observer && observer->on_value;
  if (capture) std::call_once(sig.capture_once, [&] { fill_capture_lists(sig); });
  std::vector<double>* step_us = observer ? observer->step_us : nullptr;
  if (st.ok() && capture) st = report_known(sig, *ctx, *observer);
  for (size_t i = 0; i < ctx->bound.size() && st.ok(); ++i) {
    // A step too small to share out runs on this thread alone (cpu_step_work.h).
    const bool serial = sig.steps[i].info.serial && threads_ > 1;
    if (serial) omp_set_num_threads(1);
    if (step_us) {
      auto t0 = std::chrono::steady_clock::now();
      st = ctx->bound[i]->run();
      step_us->push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      if (observer->steps) observer->steps->push_back(sig.steps[i].info);
    } else {
      st = ctx->bound[i]->run();
    }
    if (serial) omp_set_num_threads(threads_);
    if (st.ok() && capture) st = report_step(sig, *ctx, i, *observer);
  }
  // The values the next segment reads leave the arena (the context goes back to the pool).
  for (size_t i = 0; st.ok() && sig.dynamic && i < sig.carried_slots.size(); ++i)
    carried->push_back(ctx->tensors[size_t(sig.carried_slots[i])].clone());
  if (st.ok() && !sig.dynamic) {
    outputs->resize(sig.output_slots.size());
    for (size_t i = 0; i < sig.output_slots.size(); ++i) {
      if (sig.direct_outputs[i]) continue;  // written in place by its step
      const Tensor& src = ctx->tensors[size_t(sig.output_slots[i])];
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
  for (size_t i = 0; i < inputs.size(); ++i) ctx->tensors[size_t(sig.input_slots[i])] = Tensor();
  if (!sig.dynamic) return_outputs(sig, *ctx);
  {
    std::lock_guard<std::mutex> lock(sig.mu);
    sig.free_contexts.push_back(std::move(ctx));
  }
  return st;
}

Status CpuSession::run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, const RunObserver* observer) {
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
  omp_set_num_threads(threads_);
  if (observer && observer->step_us) observer->step_us->clear();
  if (observer && observer->steps) observer->steps->clear();
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<Signature> sig, signature_for(0, graph_inputs_, dims));
  if (!sig->dynamic) return run_segment(*sig, inputs, outputs, nullptr, observer);  // the common case

  // Planned in segments (cpu_plan.h): run one, evaluate the data-dependent node on the
  // values that came out, plan (or find) the next segment for the shapes it produced.
  std::vector<Tensor> feed = inputs;
  std::vector<const Value*> values = graph_inputs_;
  for (;;) {
    std::vector<Tensor> carried;
    FERRY_TRY(run_segment(*sig, feed, outputs, &carried, observer));
    if (!sig->dynamic) return Status::Ok();
    const Node& n = *sig->dynamic;
    std::vector<const Tensor*> ins(n.num_inputs(), nullptr);
    for (size_t i = 0; i < n.num_inputs(); ++i) {
      const Value* v = n.input(i);
      if (!v) continue;
      if (v->is_constant()) { ins[i] = v->constant(); continue; }
      for (size_t k = 0; k < sig->carried.size() && !ins[i]; ++k)
        if (sig->carried[k] == v) ins[i] = &carried[k];
      if (!ins[i]) return internal_error("node " + n.describe() + ": input '" + v->name() + "' was not carried");
    }
    std::vector<Tensor> outs;
    FERRY_TRY(run_dynamic(n, ins, &outs, observer));
    if (observer && observer->on_value)
      for (size_t i = 0; i < outs.size(); ++i) observer->on_value(n.output(i), outs[i]);
    values = sig->carried;
    feed = std::move(carried);
    for (size_t i = 0; i < outs.size(); ++i) {
      values.push_back(n.output(i));
      feed.push_back(std::move(outs[i]));
    }
    std::vector<const std::vector<int64_t>*> next_dims;
    for (const Tensor& t : feed) next_dims.push_back(&t.dims());
    FERRY_ASSIGN_OR_RETURN(sig, signature_for(sig->end + 1, values, next_dims));
  }
}

Result<std::shared_ptr<CpuSession>> CpuSession::nested_session(const Graph& g) {
  std::lock_guard<std::mutex> lock(nested_mu_);
  if (auto it = nested_.find(&g); it != nested_.end()) return it->second;
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> flat, clone_subgraph_as_graph(g));
  // A loop-carried value may change shape from what the body declares: dims come from the run.
  for (Value* in : flat->inputs()) in->set_shape(Shape::unknown_rank());
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<CpuSession> s, compile(std::shared_ptr<const Graph>(std::move(flat)), options_));
  std::shared_ptr<CpuSession> shared(std::move(s));
  nested_[&g] = shared;
  return shared;
}

namespace {
/// The profile's record of a data-dependent node the session ran outside its plan.
StepInfo cpu_dynamic_step_info(const Node& n, const std::vector<const Tensor*>& inputs,
                               const std::vector<Tensor>& outputs) {
  std::string shapes;
  for (const Tensor* t : inputs)
    if (t) shapes += (shapes.empty() ? "" : ", ") + dims_text(t->dtype(), t->dims());
  shapes += " ->";
  for (const Tensor& t : outputs) shapes += " " + dims_text(t.dtype(), t.dims());
  return {n.name(), op_name(n.op()), std::string("ref_") + op_name(n.op()), shapes, true};
}
}  // namespace

Status CpuSession::run_dynamic(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
                               const RunObserver* observer) {
  const bool timed = observer && observer->step_us && observer->steps;
  if (!has_subgraphs(n) || options_.reference_kernels) {
    auto t0 = std::chrono::steady_clock::now();
    FERRY_TRY(run_node(n, inputs, outputs));
    if (timed) {
      observer->step_us->push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      observer->steps->push_back(cpu_dynamic_step_info(n, inputs, *outputs));
    }
    return Status::Ok();
  }
  SubgraphRunner run = [this, timed, observer](const Graph& g,
                                                const std::vector<const Tensor*>& bound) -> Result<std::vector<Tensor>> {
    FERRY_ASSIGN_OR_RETURN(std::shared_ptr<CpuSession> s, nested_session(g));
    std::vector<Tensor> ins;
    for (const Tensor* t : bound) {
      if (!t) return internal_error("subgraph '" + g.info().graph_name + "': an input is not bound");
      ins.push_back(*t);
    }
    std::vector<Tensor> outs;
    // A body's steps go into the profile in place of the node's (run() clears what it is given).
    std::vector<double> us;
    std::vector<StepInfo> steps;
    RunObserver nested;
    nested.step_us = &us, nested.steps = &steps;
    FERRY_TRY(s->run(ins, &outs, timed ? &nested : nullptr));
    if (timed) {
      observer->step_us->insert(observer->step_us->end(), us.begin(), us.end());
      observer->steps->insert(observer->steps->end(), steps.begin(), steps.end());
    }
    return outs;
  };
  Status st = run_control_flow(n, inputs, outputs, run);
  if (!st.ok()) return std::move(st).with_context("running node " + n.describe());
  return Status::Ok();
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
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<Signature> sig, signature_for(0, graph_inputs_, d));
  return sig->info;
}

}  // namespace ferry
