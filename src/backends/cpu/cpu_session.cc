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
    obs.on_value(slot.value, plain);
  }
  return Status::Ok();
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
  return s;
}

CpuSession::~CpuSession() = default;

Result<CpuSession::Signature*> CpuSession::signature_for(const std::vector<const std::vector<int64_t>*>& dims) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : signatures_) {
    bool same = s->dims.size() == dims.size();
    for (size_t i = 0; same && i < dims.size(); ++i) same = s->dims[i] == *dims[i];
    if (same) return s.get();
  }
  std::vector<std::vector<int64_t>> d;
  for (auto* p : dims) d.push_back(*p);
  FERRY_ASSIGN_OR_RETURN(auto sig, schedule_signature(*graph_, order_, d, options_));
  FERRY_TRY(plan_signature_memory(*sig, !options_.reference_kernels));
  signatures_.push_back(std::move(sig));
  return signatures_.back().get();
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
  const bool capture = observer && observer->on_value;
  if (capture) std::call_once(sig->capture_once, [&] { fill_capture_lists(*sig); });
  std::vector<double>* step_us = observer ? observer->step_us : nullptr;
  if (step_us) step_us->assign(ctx->bound.size(), 0.0);
  Status st = capture ? report_known(*sig, *ctx, *observer) : Status::Ok();
  for (size_t i = 0; i < ctx->bound.size() && st.ok(); ++i) {
    if (step_us) {
      auto t0 = std::chrono::steady_clock::now();
      st = ctx->bound[i]->run();
      (*step_us)[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    } else {
      st = ctx->bound[i]->run();
    }
    if (st.ok() && capture) st = report_step(*sig, *ctx, i, *observer);
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
