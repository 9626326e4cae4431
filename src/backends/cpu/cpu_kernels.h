// backends/cpu/cpu_kernels.h — registers the rows of kernels.def with the
// kernel registry (ops/registry.h). Idempotent and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ops/op_context.h"
#include "ops/registry.h"
#include "runtime/step.h"

namespace ferry {

void register_cpu_kernels();

/// Plan-time conditions of the kernels that cover part of their op (KernelEntry::accepts).
bool cpu_kernel_accepts_two_inputs(const Node& n, const std::vector<const Tensor*>& known,
                                   const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_pow(const Node& n, const std::vector<const Tensor*>& known,
                            const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_gather(const Node& n, const std::vector<const Tensor*>& known,
                               const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_reduce(const Node& n, const std::vector<const Tensor*>& known,
                               const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_resize(const Node& n, const std::vector<const Tensor*>& known,
                               const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_split(const Node& n, const std::vector<const Tensor*>& known,
                              const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_expand(const Node& n, const std::vector<const Tensor*>& known,
                               const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_pad(const Node& n, const std::vector<const Tensor*>& known,
                            const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_cast(const Node& n, const std::vector<const Tensor*>& known,
                             const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_where(const Node& n, const std::vector<const Tensor*>& known,
                              const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_prelu(const Node& n, const std::vector<const Tensor*>& known,
                              const std::vector<std::vector<int64_t>>& dims);
/// Cast f32 -> bf16, bf16 -> f32 (or bf16 -> bf16, a copy) over `count` elements of one
/// layout `layout` (any: the output keeps it, a blocked one with its zero padding), as
/// ir/dtype.h converts (nearest even, subnormals kept): the precision pass's rounding pairs
/// (native/cast.cc).
std::unique_ptr<Step> make_cast_bf16_step(DType from, DType to, int64_t count, const std::string& layout, Isa isa);
/// QuantizeLinear(x, scale, zero_point) f32 -> u8 per tensor over `count` elements of any dense
/// layout `layout` (the output keeps it): the step the int8 convolutions read (native/quantize.cc).
std::unique_ptr<Step> make_quantize_u8_step(float scale, uint8_t zero_point, int64_t count, const std::string& layout,
                                            Isa isa);
/// QuantizeLinear as make_quantize_u8_step (the same bytes) of a plain [N, C, spatial...] f32
/// input written channels-last, for C <= 4 on hosts with AVX512_VBMI (nullptr otherwise): an
/// int8 model's image input (native/quantize_nhwc.cc).
std::unique_ptr<Step> make_quantize_u8_to_nhwc_step(float scale, uint8_t zero_point, const std::vector<int64_t>& dims,
                                                    Isa isa);
/// DynamicQuantizeLinear over `count` elements of any dense layout `layout` (the u8 output
/// keeps it; scale and zero point are scalars): the reference kernel's arithmetic.
std::unique_ptr<Step> make_dynamic_quantize_u8_step(int64_t count, const std::string& layout, Isa isa);
/// DequantizeLinear of `x` (u8 / i8) with one scale and one (or no) zero point, read when the
/// step runs (computed ones, e.g. a DynamicQuantizeLinear's), over any dense layout.
std::unique_ptr<Step> make_dequantize_step(DType x, int64_t count, const std::string& layout, Isa isa);
bool cpu_kernel_accepts_quantize(const Node& n, const std::vector<const Tensor*>& known,
                                 const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_clip(const Node& n, const std::vector<const Tensor*>& known,
                             const std::vector<std::vector<int64_t>>& dims);
bool cpu_kernel_accepts_compare(const Node& n, const std::vector<const Tensor*>& known,
                                const std::vector<std::vector<int64_t>>& dims);

// Declarations of every kernel in the table.
#define FERRY_DECLARE_CPU_KERNEL(op, dtype, isa, fn, in_place) Status fn(KernelContext& ctx);
#include "backends/cpu/kernels.def"
FERRY_CPU_KERNELS(FERRY_DECLARE_CPU_KERNEL)
#undef FERRY_DECLARE_CPU_KERNEL

/// The fused Attention op with bf16 products: not table rows; the scheduler picks the one
/// cpu_bf16_attention_kernel names (cpu_precision.h) for an Attention whose Q, K, V the
/// precision pass rounded to bf16 where the CPU target accelerates bf16 Attention
/// (cpu_schedule.cc bf16_attention). attention_bf16__avx512bf16 (native/attention_bf16.cc,
/// vdpbf16ps) falls back to attention_f32__avx512 for decode steps and on CPUs without
/// AVX512_BF16; attention_bf16__amx (native/attention_amx.cc, AMX tiles) to the avx512bf16 one
/// for decode steps and where the CPU or the OS gives no AMX tiles.
Status attention_bf16__avx512bf16(KernelContext& ctx);
Status attention_bf16__amx(KernelContext& ctx);
/// The fp32 Attention at fp32 accuracy on AMX tiles (three bf16 products a product; SessionOptions::
/// fp32_bf16x3): not a table row either; decode steps and hosts without AMX run attention_f32__avx512.
Status attention_f32x3__amx(KernelContext& ctx);

}  // namespace ferry
