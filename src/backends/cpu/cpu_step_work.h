// backends/cpu/cpu_step_work.h — how much work a step does, and whether it is too small
// to share out among threads.
//
// Every step that runs in parallel pays a wake-up of the other threads: a few
// microseconds while they spin, 20-100 us once they sleep (ferry's default spins
// briefly and then sleeps, and a busy machine deschedules them). A wake-word head's
// [1,128] LayerNorm or 128x128 GEMV is a few microseconds of work on one core, so on
// two threads it took 10x as long as its arithmetic. Steps under both bounds below run
// on the calling thread alone (cpu_session.cc: omp_set_num_threads(1) around them);
// the plan says so (StepInfo::serial, `ferry bench --profile`).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace ferry {

/// Under both: one thread. ~1 MFLOP is 20-50 us on one AVX2 core, about what a wake of a
/// sleeping thread costs; 1 MiB streams from L3 in ~30 us. hey_jarvis's 1536x128 GEMVs
/// (0.4 MFLOP, 0.8 MB) took 0.05 ms on two sleeping threads and 0.02 ms on one (Zen 3).
constexpr double kSerialStepFlops = 1 << 20;
constexpr double kSerialStepBytes = 1 << 20;

/// Estimated FLOPs of node `n` with these operand dims (all of the node's inputs, absent:
/// empty) and output-0 dims: 2*M*N*K for MatMul / Gemm families, 2 * output * (weights
/// per output channel) for convolutions, one per output element for the rest; -1 for ops
/// whose work the dims do not bound (LSTM, GRU, RNN, Attention, control flow, Einsum).
double step_flops(const Node& n, const std::vector<std::vector<int64_t>>& in_dims, const std::vector<int64_t>& out_dims);

/// True when a step of `flops` (-1: unknown) touching `bytes` gains nothing from a second thread.
inline bool runs_serial(double flops, double bytes) {
  return flops >= 0 && flops < kSerialStepFlops && bytes < kSerialStepBytes;
}

}  // namespace ferry
