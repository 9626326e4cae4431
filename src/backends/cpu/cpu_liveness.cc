// backends/cpu/cpu_liveness.cc — stage 2 of a signature: buffers and their lifetimes.
//
// Every arena slot that is not a view owns a buffer, live from the step that
// writes it to the last step that reads it (graph outputs: to the end). A step
// whose Step::in_place_input() dies at that step writes over it instead (the
// output becomes a view of the input, its lifetime merged). Views (Reshape-like
// nodes, in-place outputs) resolve to the slot that owns the memory. Graph outputs
// that own their memory alone take none: each run lends them the caller's tensor
// (Signature::direct_outputs). Then the best-fit planner (planner/memory_plan.h)
// packs the buffers into one arena.
#include <algorithm>
#include <climits>

#include "backends/cpu/cpu_plan.h"

namespace ferry {
namespace {

/// First writing step and last reading step of every slot's memory owner.
struct Lifetimes {
  std::vector<int> first, last;
};

int root_of(const std::deque<Slot>& slots, int s) {
  while (slots[size_t(s)].buffer <= -2) s = -2 - slots[size_t(s)].buffer;
  return s;
}

Lifetimes lifetimes(const CpuSession::Signature& sig, bool outputs_live) {
  const std::deque<Slot>& slots = sig.slots;
  Lifetimes t{std::vector<int>(slots.size(), INT_MAX), std::vector<int>(slots.size(), -1)};
  const int nsteps = int(sig.steps.size());
  for (int i = 0; i < nsteps; ++i) {
    for (int s : sig.steps[size_t(i)].ins)
      if (s >= 0) t.last[size_t(root_of(slots, s))] = std::max(t.last[size_t(root_of(slots, s))], i);
    for (int s : sig.steps[size_t(i)].outs) {
      const size_t r = size_t(root_of(slots, s));
      t.first[r] = std::min(t.first[r], i);
      if (outputs_live) t.last[r] = std::max(t.last[r], i);
    }
  }
  // Graph outputs, and the values a data-dependent segment hands to the next one
  // (copied out after its last step), live to the end.
  for (int s : sig.output_slots) t.last[size_t(root_of(slots, s))] = nsteps;
  for (int s : sig.carried_slots) t.last[size_t(root_of(slots, s))] = nsteps;
  return t;
}

/// In place: an elementwise step may write over its input when that input dies there.
void merge_in_place(CpuSession::Signature& sig) {
  std::deque<Slot>& slots = sig.slots;
  Lifetimes t = lifetimes(sig, false);
  // A graph output of the last segment is better lent the caller's tensor (no copy) than
  // written over its input (cpu_plan.h, Signature::direct_outputs).
  std::vector<bool> graph_output(slots.size(), false);
  for (int s : sig.output_slots) graph_output[size_t(s)] = !sig.dynamic;
  for (int i = 0; i < int(sig.steps.size()); ++i) {
    PlannedStep& ps = sig.steps[size_t(i)];
    const int k = ps.step->in_place_input();
    if (k < 0 || size_t(k) >= ps.ins.size() || ps.ins[size_t(k)] < 0 || ps.outs.size() != 1) continue;
    const int in = root_of(slots, ps.ins[size_t(k)]), out = ps.outs[0];
    if (slots[size_t(ps.ins[size_t(k)])].view_offset != 0) continue;  // a slice of its owner: not the whole buffer
    if (slots[size_t(in)].kind != Slot::kArena || slots[size_t(out)].buffer <= -2 || graph_output[size_t(out)]) continue;
    if (t.last[size_t(in)] != i || slots[size_t(in)].bytes != slots[size_t(out)].bytes) continue;
    bool read_twice = false;
    for (size_t j = 0; j < ps.ins.size(); ++j)
      read_twice |= j != size_t(k) && ps.ins[j] >= 0 && root_of(slots, ps.ins[j]) == in;
    if (read_twice) continue;
    slots[size_t(out)].buffer = -2 - in;  // becomes a view of its input
    t.last[size_t(in)] = std::max(t.last[size_t(in)], t.last[size_t(out)]);
    t.first[size_t(out)] = INT_MAX;
    ++sig.info.in_place;
  }
}

/// Graph outputs whose slot would own its buffer alone (cpu_plan.h, Signature::direct_outputs):
/// an arena slot in plain layout, no view (in place or Reshape-like) of another slot and viewed
/// by none, listed once. They get no arena buffer: each run lends them the caller's tensor.
std::vector<bool> direct_outputs(const CpuSession::Signature& sig) {
  const std::deque<Slot>& slots = sig.slots;
  std::vector<bool> viewed(slots.size(), false);
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].kind == Slot::kArena && slots[s].buffer <= -2) viewed[size_t(root_of(slots, int(s)))] = true;
  std::vector<bool> direct(sig.output_slots.size(), false);
  for (size_t i = 0; i < sig.output_slots.size(); ++i) {
    const int o = sig.output_slots[i];
    const Slot& s = slots[size_t(o)];
    bool once = true;
    for (size_t j = 0; j < sig.output_slots.size(); ++j) once &= j == i || sig.output_slots[j] != o;
    direct[i] = once && s.kind == Slot::kArena && s.buffer > -2 && s.view_of < 0 && !viewed[size_t(o)] && s.plain();
  }
  return direct;
}

}  // namespace

Status plan_signature_memory(CpuSession::Signature& sig, bool in_place) {
  if (in_place) merge_in_place(sig);
  std::deque<Slot>& slots = sig.slots;
  const Lifetimes t = lifetimes(sig, true);
  sig.direct_outputs.assign(sig.output_slots.size(), false);
  if (!sig.dynamic) sig.direct_outputs = direct_outputs(sig);
  std::vector<bool> lent(slots.size(), false);
  for (size_t i = 0; i < sig.output_slots.size(); ++i)
    if (sig.direct_outputs[i]) lent[size_t(sig.output_slots[i])] = true;
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].kind != Slot::kArena || slots[s].buffer <= -2 || lent[s]) continue;
    if (t.first[s] == INT_MAX && t.last[s] < 0) continue;  // never used
    if (t.first[s] == INT_MAX) return internal_error("a planned value is read but never written");
    slots[s].buffer = int(sig.buffers.size());
    sig.buffers.push_back({slots[s].bytes, t.first[s], std::max(t.first[s], t.last[s])});
  }
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].kind != Slot::kArena || slots[s].buffer > -2) continue;
    const Slot& owner = slots[size_t(root_of(slots, int(s)))];
    if (owner.kind != Slot::kArena) return internal_error("view of a non-arena value");
    if (owner.buffer >= 0) slots[s].buffer = owner.buffer;
  }
  sig.plan = plan_memory(sig.buffers);
  for (const PlannedStep& ps : sig.steps) sig.scratch = std::max(sig.scratch, ps.step->scratch_bytes());
  sig.info.arena_bytes = sig.plan.peak;
  sig.info.naive_bytes = sig.plan.naive;
  sig.info.scratch_bytes = sig.scratch;
  sig.info.num_buffers = sig.buffers.size();
  for (const PlannedStep& ps : sig.steps) sig.info.steps.push_back(ps.info);
  return Status::Ok();
}

}  // namespace ferry
