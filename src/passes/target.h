// passes/target.h — a backend's target description: what it executes natively.
//
// The optimizer asks the target before it fuses (DESIGN.md, "The target decides
// what the optimizer makes"): a fusion runs only when the target executes the op it
// forms, and an epilogue absorbs only the activations the target's fused
// Conv / MatMul apply in the same step. What `ferry convert --target T` writes is
// therefore the graph T runs, node for node; no backend unfuses or refuses a node
// the optimizer made for it.
//
//   Target t = cpu_target(host_isa());        // backends/cpu/cpu_target.h
//   optimize(graph, t, {}, &stats);            // passes/pipeline.h
//
// Each backend publishes one (reference_target() below: the interpreter runs every
// op, so it takes every fusion; the CPU backend derives its own from its kernel
// table, per ISA). Room for a CUDA one: a name, its ops and epilogues, its dtypes.
#pragma once

#include <string>
#include <vector>

#include "ir/activation.h"
#include "ir/dtype.h"
#include "ir/op.h"

namespace ferry {

struct Target {
  std::string name;  ///< "cpu", "reference"
  std::string isa;   ///< what the description is for: "avx2", "avx512", "amx" ("" = any)
  /// Ops the fusions may form because the target runs them fast: FusedConv, FusedMatMul,
  /// FusedConvTranspose, LayerNormalization, RMSNormalization, Gelu, Attention, Swish; and
  /// the integer ops it runs on integer kernels (ConvInteger, MatMulInteger: otherwise
  /// lower_integer_matmuls writes them as f32 Conv / MatMul); ConvTranspose when its
  /// deconvolution runs the kernel == stride form fast (otherwise lower_conv_transpose
  /// writes that form as a 1x1 Conv + DepthToSpace).
  std::vector<Op> ops;
  /// Activations a FusedConv / FusedConvTranspose (resp. FusedMatMul) applies in one step.
  std::vector<Activation> conv_epilogues;
  std::vector<Activation> matmul_epilogues;
  /// Activations a FusedMul (x * s + z, fuse_mul_epilogue) applies in one step.
  std::vector<Activation> mul_epilogues;
  /// Element types of its fast kernels (the precision passes lower only to these).
  std::vector<DType> dtypes;
  /// Activation layout its convolution chains prefer: "plain" (as the graph says) or
  /// "blocked" (the backend picks a blocked layout per chain and reorders at the edges).
  std::string layout = "plain";
  /// The widest padding of a convolution's innermost spatial axis its convolution kernels
  /// take at full speed (-1: any). A Conv padded wider gets an explicit Pad before it
  /// (passes/pad_wide_convs.cc): oneDNN's AVX2 direct convolution takes at most 3 and
  /// otherwise falls to im2col + GEMM, ~4x slower (basic-pitch's 3x39 kernel, pad 19).
  int64_t conv_pad_limit = -1;
  /// A FusedMatMul's residual Z may broadcast over the output in any way (false: only a Z
  /// of the output's shape, a per-column row [1.., N], a scalar, or [B, 1.., N] with the
  /// output's B: the forms oneDNN 2.6's matmul post-op runs in its brgemm kernel; a Z
  /// broadcast over the batch dims, as a window attention's [1, H, S, S] bias, makes the
  /// whole product oneDNN's reference matmul, so that Add stays a step of its own).
  bool matmul_residual_any_broadcast = true;

  /// The target runs `op` natively, so a fusion may form it.
  bool executes(Op op) const;
  /// A fused op of `host`'s family (Conv/ConvTranspose, MatMul or Mul) may absorb `a`.
  bool epilogue(Op host, Activation a) const;
};

/// The reference interpreter's target: every fused op, every epilogue, every dtype.
const Target& reference_target();

/// One line for reports: "target cpu (avx2): forms FusedConv, ...; conv epilogues ...".
std::string target_summary(const Target& t);

}  // namespace ferry
