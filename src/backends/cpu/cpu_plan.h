// backends/cpu/cpu_plan.h — the per-signature plan of a CpuSession, shared by its
// stages (internal to backends/cpu):
//   schedule  (cpu_schedule.cc)  a step per node, slots for every value, layouts;
//   liveness  (cpu_liveness.cc)  first / last use per buffer, in-place steps, the arena plan;
//   bind      (cpu_bind.cc)      a Context: arena, tensors, bound steps.
// A Slot is one value in one layout (a value read in two layouts has two slots,
// the second made by a reorder step).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/cpu/cpu_session.h"
#include "planner/memory_plan.h"
#include "runtime/step.h"

namespace ferry {

struct Slot {
  enum Kind { kInput, kConstant, kKnown, kArena } kind = kArena;
  DType dtype = DType::undefined;
  std::vector<int64_t> dims;
  dnnl::memory::desc layout;     ///< zero: plain
  int input_index = -1;
  const Tensor* data = nullptr;  ///< kConstant: the graph's constant
  Tensor known;                  ///< kKnown: evaluated at reshape
  size_t bytes = 0;
  int buffer = -1;               ///< kArena: planner buffer; <= -2: a view of slot (-2 - buffer)
  const Value* value = nullptr;  ///< the graph value this slot holds (null for reorder copies)
  int view_of = -1;              ///< a Reshape-like view: the slot whose memory it reads
  size_t view_offset = 0;        ///< a view: bytes from the start of its owner's memory (a Gather of one index)
  std::map<std::string, int> reorders;  ///< layout key -> slot holding this value in that layout
  const Tensor* known_tensor() const { return kind == kConstant ? data : kind == kKnown ? &known : nullptr; }
  bool plain() const;
};

struct PlannedStep {
  std::unique_ptr<Step> step;
  std::vector<int> ins;   ///< slot per StepIO input (-1: omitted)
  std::vector<int> outs;
  StepInfo info;
};

/// A signature plans one segment of the topological order: [begin, end). A model
/// whose shapes depend on its data (NonZero, a Reshape to a computed shape) is
/// planned in segments: the schedule stops at the first node whose output shape it
/// cannot know (`dynamic`), the session runs that segment, evaluates `dynamic` on its
/// reference kernel with the actual values, and plans the next segment for the
/// shapes that came out (cached like any signature).
struct CpuSession::Signature {
  size_t begin = 0, end = 0;              ///< the segment, as indices into the topological order
  std::vector<const Value*> inputs;       ///< what the segment reads from outside (graph inputs at first)
  std::vector<std::vector<int64_t>> dims; ///< their dims: the cache key, with begin
  const Node* dynamic = nullptr;          ///< the node at `end` the next segment starts after (null: last segment)
  std::vector<const Value*> carried;      ///< values later segments (or the graph outputs) read
  std::vector<int> carried_slots;         ///< their (plain) slots
  std::deque<Slot> slots;  ///< a deque: pointers to slots (and their known tensors) stay valid as it grows
  std::vector<PlannedStep> steps;
  std::vector<int> input_slots;
  std::vector<int> output_slots;
  /// Per graph output: its slot would own its buffer alone (plain, not a view, viewed by none,
  /// listed once), so it has no arena buffer and the steps write it straight into the caller's
  /// tensor, lent to the slot for each run (no copy after the run, no arena space).
  std::vector<bool> direct_outputs;
  std::vector<BufferLifetime> buffers;
  MemoryPlan plan;
  size_t scratch = 0;
  PlanInfo info;
  std::mutex mu;
  std::vector<std::unique_ptr<Context>> free_contexts;
  /// Per step: the slots holding graph values that are complete once it ran (its outputs
  /// and the views of them); for RunObserver::on_value. Filled on first use.
  std::once_flag capture_once;
  std::vector<std::vector<int>> capture_after;
};

struct CpuSession::Context {
  std::shared_ptr<Buffer> arena;
  std::vector<Tensor> tensors;  ///< per slot
  std::vector<StepIO> ios;      ///< per step
  std::vector<std::unique_ptr<BoundStep>> bound;
  std::vector<Tensor> parked;  ///< per graph output: what its slot held before the caller's tensor was lent
};

/// Stage 1: a step per node of `order` from `begin`, for `inputs` of `dims`, up to the
/// end or the first node with a data-dependent output shape (Signature::dynamic).
Result<std::unique_ptr<CpuSession::Signature>> schedule_signature(const Graph& g, const std::vector<const Node*>& order,
                                                                  size_t begin, const std::vector<const Value*>& inputs,
                                                                  const std::vector<std::vector<int64_t>>& dims,
                                                                  const SessionOptions& options);
/// Stage 2: lifetimes of the arena slots (after in-place merging when `in_place`) and the arena plan.
Status plan_signature_memory(CpuSession::Signature& sig, bool in_place);
/// Stage 3: one execution context (arena, tensors, bound steps) for `sig`.
Result<std::unique_ptr<CpuSession::Context>> bind_context(CpuSession::Signature& sig);

/// "f32[1,3,224,224]".
std::string dims_text(DType t, const std::vector<int64_t>& d);

}  // namespace ferry
