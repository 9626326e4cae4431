#include "backends/cpu/cpu_target.h"

#include <cpuid.h>

#include <algorithm>

#include "backends/cpu/cpu_epilogue.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_precision.h"
#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/activation.h"
#include "backends/cpu/native/attention_kernel.h"
#include "backends/cpu/onednn/onednn_common.h"
#include "env/host_info.h"
#include "precision/int8_weight_grid.h"

namespace ferry {
namespace {

/// A fusion's product runs fast: a oneDNN / own-kernel step, or a kernel-table row.
bool runs_fast(Op op, Isa isa) {
  // oneDNN's deconvolution runs a kernel == stride ConvTranspose at ~3.5 GFLOP/s (PP-OCR's
  // DBNet head); lower_conv_transpose makes it a 1x1 convolution + DepthToSpace.
  if (op == Op::ConvTranspose) return false;
  if (op == Op::Gelu) return native_activation(Activation::kGelu, isa) != nullptr;  // steps need the ISA's kernel
  if (op == Op::Swish) return native_activation(Activation::kSiLU, isa) != nullptr;
  return step_row(op) != nullptr || select_kernel(op, DType::f32, isa) != nullptr;
}

}  // namespace

Target cpu_target(Isa isa) {
  isa = std::min(isa, host_isa());
  register_cpu_kernels();
  Target t;
  t.name = "cpu";
  t.isa = isa_name(isa);
  // The ops a fusion forms (reference_target() lists them all); the CPU keeps those it runs fast.
  for (Op op : reference_target().ops)
    if (runs_fast(op, isa)) t.ops.push_back(op);
  for (Activation a : all_activations())
    if (cpu_applies(a, isa)) {
      t.conv_epilogues.push_back(a);
      t.matmul_epilogues.push_back(a);
      t.mul_epilogues.push_back(a);
    }
  t.dtypes = {DType::f32};
  t.matmul_residual_any_broadcast = false;  // oneDNN's matmul post-op: see Target
  t.layout = "blocked";
  // oneDNN's jit direct convolution takes a left/right pad up to its register block of
  // output columns (ur_w, 3 at AVX2); measured (AVX2): pad 3 jit:avx2, pad 4+ x64:gemm:jit.
  // Its AVX-512 brgconv takes wide pads itself: basic-pitch's 3x39 conv with pad 19 ran in
  // 9.8 ms against 10.2 ms after an explicit Pad (+0.24 ms for the Pad, +0.13 ms for a second
  // reorder of its input; one Zen 5 thread beside a build), so no limit when oneDNN runs AVX-512.
  // dnnl_cpu_isa_t is a set of bits (avx2_vnni = 0x407 is above avx512_core = 0x27 but is AVX2).
  const unsigned dnnl_isa = unsigned(dnnl_get_effective_cpu_isa()), avx512 = unsigned(dnnl_cpu_isa_avx512_core);
  t.conv_pad_limit = (dnnl_isa & avx512) == avx512 ? -1 : 3;
  return t;
}

// --- precisions (backends/cpu/cpu_precision.h) ----------------------------------
namespace {

bool cpu_flag_usable(const char* name) {
  static const std::vector<env::IsaFlag> flags = env::read_isa_flags();
  for (const env::IsaFlag& f : flags)
    if (f.name == name) return f.usable;
  return false;
}

/// oneDNN's effective ISA (after ONEDNN_MAX_CPU_ISA), as its env spelling: "AVX2", "AVX512_CORE_AMX".
std::string onednn_effective_isa() { return env::onednn_isa_name(int(dnnl_get_effective_cpu_isa())); }

struct HwPath {
  const char* flag;  ///< /proc/cpuinfo name of the hardware feature
  Isa min_isa;       ///< ferry's dispatch cap that allows it
  /// The oneDNN ISA level that allows it (dnnl_cpu_isa_t bits): oneDNN's levels are cumulative,
  /// so AVX512_CORE_AMX allows the avx512_bf16 path too (a ferry dispatch cap of avx512 on an
  /// AMX host runs oneDNN's bf16 kernels all the same: ferry's cap does not choose them).
  unsigned onednn_bits;
};

/// Whether this CPU is AMD family 0x1A (Zen 5).
bool amd_zen5() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  const bool amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;  // "AuthenticAMD"
  if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return false;
  const unsigned base = (a >> 8) & 0xfu, family = base == 0xfu ? base + ((a >> 20) & 0xffu) : base;
  return family == 0x1Au;
}

}  // namespace

/// The bf16 Attention kernel measured faster than the fp32 one on this CPU: a CPU-feature /
/// family rule, not a run-time calibration (a timing taken at first use on a shared 2-core host
/// is noise; the choice must not vary run to run). bench/RESULTS.md has the measurements.
///  - AMX-BF16 usable (CPUID, XCR0 and the OS granting this process the tile state) and the
///    dispatch cap at amx: native/attention_amx.cc, both products on tiles: 1.9-4x the fp32
///    kernel at S = 128 .. 4096 on a Sapphire-Rapids-class Xeon (2.8-4x at S >= 512; 2026-12-06).
///  - AMD family 0x1A (Zen 5, full-width AVX-512: a zmm vdpbf16ps issues as often as an FMA and
///    does twice its products), cap avx512 or above: native/attention_bf16.cc, 1.4-1.5x fp32
///    at S = 128 .. 4096 (2026-12-04).
///  - Elsewhere none: on the Xeon vdpbf16ps issues at half the FMA rate and the avx512bf16
///    kernel, re-tiled since, is still slower than fp32 (0.6-0.7x, 2026-12-06), so a Xeon capped
///    below amx keeps fp32; CPUs not measured (Zen 4's double-pumped AVX-512 included) too.
const char* cpu_bf16_attention_kernel(Isa isa) {
  isa = std::min(isa, host_isa());
  if (isa < Isa::avx512 || !cpu_flag_usable("avx512_bf16")) return nullptr;
  if (isa >= Isa::amx && cpu_flag_usable("amx_bf16") && attn::amx_attention_available()) return "attention_bf16__amx";
  if (amd_zen5()) return "attention_bf16__avx512bf16";
  return nullptr;
}

const char* cpu_fp32x3_attention_kernel(Isa isa) {
  const char* bf16 = cpu_bf16_attention_kernel(isa);
  return bf16 && std::string(bf16) == "attention_bf16__amx" ? "attention_f32x3__amx" : nullptr;
}

namespace {

/// TargetPrecisions::fp32_bf16x3: what --fp32-math bf16x3 runs at cap `isa`, or why it runs exact.
std::string fp32_bf16x3_note(Isa isa) {
  if (cpu_fp32x3_attention_kernel(isa))
    return "--fp32-math bf16x3 available (opt-in): fp32 Attention as three bf16 products a product on AMX tiles "
           "(attention_f32x3__amx, ~1e-5 from float64); default exact";
  const bool amx = cpu_flag_usable("amx_bf16") && cpu_flag_usable("avx512_bf16") && attn::amx_attention_available();
  return std::string("--fp32-math bf16x3 runs exact fp32 here: ") +
         (amx && std::min(isa, host_isa()) < Isa::amx ? "ferry's dispatch is capped below amx" : "no usable AMX-BF16");
}

/// Storage emulation of `dtype`, with `why` naming what keeps it from the hardware.
PrecisionSupport lowered_support(DType dtype, Isa isa, const std::vector<HwPath>& paths) {
  PrecisionSupport s;
  s.dtype = dtype;
  s.exec = PrecisionExec::emulated;
  const std::string d = precision_name(dtype);
  const HwPath* present = nullptr;
  for (const HwPath& p : paths)
    if (cpu_flag_usable(p.flag)) { present = &p; break; }
  if (!present) {
    std::string flags;
    for (const HwPath& p : paths) flags += std::string(flags.empty() ? "" : " / ") + p.flag;
    s.why = "no " + d + " hardware: " + std::string(isa_name(host_isa())) +
            (host_isa() >= Isa::avx512 ? " without " + flags : std::string(" only"));
    return s;
  }
  // The first path the caps allow (AMX capped to AVX-512 by --isa or ONEDNN_MAX_CPU_ISA
  // still has avx512_bf16); none: say why for the first one present.
  const std::string dnnl_isa = onednn_effective_isa();
  auto allowed = [&](const HwPath& p) {
    const unsigned have = unsigned(dnnl_get_effective_cpu_isa());
    return cpu_flag_usable(p.flag) && isa >= p.min_isa && (have & p.onednn_bits) == p.onednn_bits;
  };
  const HwPath* usable = nullptr;
  for (const HwPath& p : paths)
    if (!usable && allowed(p)) usable = &p;
  // A present path the dispatch cap allows (avx512_bf16 under --isa avx512 on an AMX host):
  // then it is oneDNN's cap that stops it.
  for (const HwPath& p : paths)
    if (cpu_flag_usable(p.flag) && isa >= p.min_isa && isa < present->min_isa) present = &p;
  if (!usable && isa < present->min_isa) {
    s.why = d + " hardware (" + present->flag + ") present, but the dispatch cap is " + isa_name(isa);
    return s;
  }
  if (!usable) {
    s.why = d + " hardware (" + present->flag + ") present, but oneDNN is capped at " + dnnl_isa + " (ONEDNN_MAX_CPU_ISA)";
    return s;
  }
  present = usable;
  const std::string impl = onednn_matmul_impl(dtype);
  if (impl.rfind("jit", 0) != 0 && impl.rfind("brg", 0) != 0) {
    s.why = d + " hardware (" + present->flag + "), but oneDNN offers only '" + impl + "' for a " + d + " matmul";
    return s;
  }
  // ferry's bf16 steps (onednn_steps.h, cpu_schedule.cc try_bf16): measured ~2x fp32 on
  // AVX512_BF16 (bench/RESULTS.md), so `auto` takes them; a conv without a jit / brgemm
  // bf16 implementation keeps Conv emulated.
  const std::string conv = onednn_conv_impl(dtype);
  const bool conv_ok = conv.rfind("jit", 0) == 0 || conv.rfind("brg", 0) == 0;
  s.exec = PrecisionExec::accelerated;
  s.accelerated_ops = {Op::MatMul, Op::FusedMatMul};
  if (conv_ok) s.accelerated_ops.insert(s.accelerated_ops.begin(), {Op::Conv, Op::FusedConv});
  // Grouped convolutions with several channels per group (RegNet's 8): oneDNN 2.6 runs them on
  // `jit_bf16` even where its plain convs use AMX, and on the Xeon that kernel is slower than
  // fp32 (RegNetY-400MF's 104-channel 3x3: 0.76 against 0.52 ms; the model 1.26x / 1.28x
  // faster at batch 1 / 8 with them fp32, bench/RESULTS.md 2026-12-07). Where the plain conv
  // has no AMX kernel either (Zen 5's avx512_bf16) nothing was measured: the rule stays off.
  const std::string grouped = onednn_grouped_conv_impl(dtype);
  if (conv_ok && conv.find("amx") != std::string::npos && grouped.find("amx") == std::string::npos)
    s.grouped_conv_declined = "a grouped convolution (several channels per group) stays fp32: oneDNN's " + d +
                              " kernel for it is '" + grouped + "', not AMX, and slower than fp32 on this CPU";
  const char* attention = cpu_bf16_attention_kernel(isa);
  if (attention) s.accelerated_ops.push_back(Op::Attention);
  s.why = "oneDNN bf16 steps on " + std::string(present->flag) + ": matmul " + impl + ", conv " +
          (conv_ok ? conv : conv + " (Conv stays emulated)") + "; bf16 inputs and weights, fp32 accumulation and output";
  if (attention && std::string(attention) == "attention_bf16__amx")
    s.why += "; Attention: ferry's AMX kernel attention_bf16__amx (bf16 Q K^T and P V on AMX tiles, fp32 softmax; "
             "measured faster than fp32 on Sapphire Rapids)";
  else if (attention)
    s.why += "; Attention: ferry's avx512_bf16 kernel attention_bf16__avx512bf16 (bf16 Q K^T and P V, fp32 softmax; "
             "measured faster on Zen 5)";
  else
    s.why += "; Attention stays emulated (fp32 kernel): no bf16 Attention kernel is measured faster on this CPU at "
             "dispatch cap " + std::string(isa_name(std::min(isa, host_isa())));
  return s;
}

}  // namespace

namespace {

std::string probe_matmul_impl(DType dtype) {
  auto dt = onednn::dnnl_type(dtype);
  if (!dt) return "none: no oneDNN type for " + std::string(dtype_name(dtype));
  try {
    using dnnl::memory;
    // 64 x 256 x 256: AMX kernels take it (a 16 x 64 x 16 one got brg:avx512_core_bf16 on an
    // AMX host, which is not what a model's layers run).
    const memory::desc a({64, 256}, *dt, memory::format_tag::ab), b({256, 256}, *dt, memory::format_tag::any),
        c({64, 256}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), onednn::engine());
    return pd.impl_info_str();
  } catch (const dnnl::error& e) {
    return std::string("none: ") + e.what();
  }
}

}  // namespace

std::string onednn_matmul_impl(DType dtype) {
  // Probed once per process (creating a primitive descriptor is not free).
  static const std::string bf16 = probe_matmul_impl(DType::bf16), f16 = probe_matmul_impl(DType::f16);
  if (dtype == DType::bf16) return bf16;
  if (dtype == DType::f16) return f16;
  return probe_matmul_impl(dtype);
}

namespace {

/// oneDNN's implementation of a 3x3 stride-1 "same" convolution of `src` ([1, C, H, W]) with
/// weights `w` ([C, C, 3, 3], or [G, C/G, C/G, 3, 3] grouped), `dtype` source and weights, f32
/// destination.
std::string probe_conv(DType dtype, const dnnl::memory::dims& src, const dnnl::memory::dims& w) {
  auto dt = onednn::dnnl_type(dtype);
  if (!dt) return "none: no oneDNN type for " + std::string(dtype_name(dtype));
  try {
    using dnnl::memory;
    using tag = memory::format_tag;
    const memory::desc s(src, *dt, tag::any), k(w, *dt, tag::any), dst(src, memory::data_type::f32, tag::any);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, s, k,
                                      memory::desc(), dst, {1, 1}, {1, 1}, {1, 1});
    return dnnl::convolution_forward::primitive_desc(d, onednn::engine()).impl_info_str();
  } catch (const dnnl::error& e) {
    return std::string("none: ") + e.what();
  }
}

std::string probe_conv_impl(DType dtype) { return probe_conv(dtype, {1, 64, 14, 14}, {64, 64, 3, 3}); }

/// 13 groups of 8 channels (RegNet's group width).
std::string probe_grouped_conv_impl(DType dtype) { return probe_conv(dtype, {1, 104, 28, 28}, {13, 8, 8, 3, 3}); }

}  // namespace

std::string onednn_grouped_conv_impl(DType dtype) {
  static const std::string bf16 = probe_grouped_conv_impl(DType::bf16);
  return dtype == DType::bf16 ? bf16 : probe_grouped_conv_impl(dtype);
}

std::string onednn_conv_impl(DType dtype) {
  static const std::string bf16 = probe_conv_impl(DType::bf16), f16 = probe_conv_impl(DType::f16);
  return dtype == DType::bf16 ? bf16 : dtype == DType::f16 ? f16 : probe_conv_impl(dtype);
}

std::string onednn_int8_matmul_impl() {
  static const std::string impl = [] {
    try {
      using dnnl::memory;
      const memory::desc a({64, 256}, memory::data_type::u8, memory::format_tag::ab),
          b({256, 256}, memory::data_type::s8, memory::format_tag::any),
          c({64, 256}, memory::data_type::f32, memory::format_tag::ab);
      return std::string(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), onednn::engine()).impl_info_str());
    } catch (const dnnl::error& e) {
      return std::string("none: ") + e.what();
    }
  }();
  return impl;
}

namespace {

/// oneDNN's implementation of a 3x3 u8 x s8 convolution with f32 destination.
std::string onednn_int8_conv_impl() {
  static const std::string impl = [] {
    try {
      using dnnl::memory;
      using tag = memory::format_tag;
      const memory::desc src({1, 64, 14, 14}, memory::data_type::u8, tag::any),
          w({64, 64, 3, 3}, memory::data_type::s8, tag::any), dst({1, 64, 14, 14}, memory::data_type::f32, tag::any);
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                        w, memory::desc(), dst, {1, 1}, {0, 0}, {1, 1}, {1, 1});
      return std::string(dnnl::convolution_forward::primitive_desc(d, onednn::engine()).impl_info_str());
    } catch (const dnnl::error& e) {
      return std::string("none: ") + e.what();
    }
  }();
  return impl;
}

bool int8_jit_impl(const std::string& impl) { return impl.rfind("jit", 0) == 0 || impl.rfind("brg", 0) == 0; }

/// int8 nodes are written as QDQ (precision/emulate_precision.h) and run on oneDNN u8 x s8
/// steps (backends/cpu/onednn/onednn_int8.h) wherever the scheduler can build one. They are
/// `accelerated` where oneDNN may use VNNI / AMX-INT8 (host_has_int8_dot_product: the CPU's
/// flags capped by ONEDNN_MAX_CPU_ISA; ferry's own dispatch cap does not choose oneDNN's int8
/// kernels) and its u8 x s8 matmul and conv are jit / brgemm: measured ~4x their f32 primitives
/// on Zen 5 (bench/RESULTS.md). Elsewhere `emulated`: oneDNN's non-VNNI int8 kernels
/// (gemm:jit, vpmaddubsw) were not measured faster than fp32. `auto` does not pick int8 either
/// way (passes/assign_precision.cc: it needs calibration data and costs accuracy).
PrecisionSupport int8_support() {
  const char* hw = nullptr;
  for (const char* flag : {"amx_int8", "avx512_vnni", "avx_vnni"})
    if (!hw && cpu_flag_usable(flag)) hw = flag;
  const std::string mm = onednn_int8_matmul_impl(), conv = onednn_int8_conv_impl();
  PrecisionSupport s{DType::i8, PrecisionExec::emulated, "", {}, int8_ops(), ""};
  const std::string what = "per-channel s8 weights, calibrated u8 activations";
  if (host_has_int8_dot_product() && int8_jit_impl(mm) && int8_jit_impl(conv)) {
    s.exec = PrecisionExec::accelerated;
    s.accelerated_ops = int8_ops();
    s.why = what + ": oneDNN u8 x s8 steps on " + hw + " (matmul " + mm + ", conv " + conv +
            "), exact s32 sums; a node whose every reader quantizes its output writes u8";
    return s;
  }
  std::string have;
  if (!hw)
    have = "no int8 dot-product hardware (VNNI / AMX-INT8): " + std::string(isa_name(host_isa())) + " only";
  else if (!host_has_int8_dot_product())
    have = std::string("int8 hardware ") + hw + " present, but oneDNN is capped at " + onednn_effective_isa() +
           " (ONEDNN_MAX_CPU_ISA)";
  else
    have = std::string("int8 hardware ") + hw + ", but oneDNN offers only matmul '" + mm + "', conv '" + conv + "'";
  s.why = what + ": oneDNN u8 x s8 steps where they are exact, fake quantization elsewhere; not measured faster than "
          "fp32 here: " + have + ", oneDNN's u8 x s8 matmul here is " + mm;
  return s;
}

}  // namespace

namespace {

/// fp16 is storage emulation on every host: weights and outputs rounded to fp16, fp32
/// compute. oneDNN 2.6 has no AVX512-FP16 ISA (dnnl_cpu_isa_t ends at avx512_core_amx): it
/// creates no f16 matmul or convolution at all, on an AVX512-FP16 Sapphire Rapids either
/// (bench/onednn_precision_probe.cc, "none: could not create a primitive"), and ferry builds
/// no fp16 compute steps (docs/precision.md says why). `why` names the hardware and oneDNN's
/// answer, so a host with avx512_fp16 is not told it is capped.
PrecisionSupport f16_support() {
  PrecisionSupport s{DType::f16, PrecisionExec::emulated, "", {}, {}, ""};
  const std::string storage = "fp16 storage (weights and outputs rounded to fp16), fp32 compute: accuracy as on fp16 "
                              "hardware, no speedup";
  if (!cpu_flag_usable("avx512_fp16")) {
    s.why = "no fp16 hardware: " + std::string(isa_name(host_isa())) +
            (host_isa() >= Isa::avx512 ? " without avx512_fp16" : " only") + "; " + storage;
    return s;
  }
  const dnnl_version_t* v = dnnl_version();
  const std::string onednn = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                             std::to_string(v->patch);
  const std::string mm = onednn_matmul_impl(DType::f16), conv = onednn_conv_impl(DType::f16);
  const std::string have = mm.rfind("none", 0) == 0 && conv.rfind("none", 0) == 0
                               ? "creates no f16 matmul or convolution"
                               : "offers f16 matmul '" + mm + "', conv '" + conv + "'";
  s.why = "fp16 hardware (avx512_fp16) present, but " + onednn + " has no fp16 kernels for it (it " + have +
          ") and ferry builds no fp16 compute steps; " + storage;
  return s;
}

}  // namespace

TargetPrecisions cpu_precisions(Isa isa) {
  isa = std::min(isa, host_isa());
  TargetPrecisions t;
  t.target = "cpu";
  t.offered = {lowered_support(DType::bf16, isa, {{"amx_bf16", Isa::amx, unsigned(dnnl_cpu_isa_avx512_core_amx)},
                                                  {"avx512_bf16", Isa::avx512, unsigned(dnnl_cpu_isa_avx512_core_bf16)}}),
                 f16_support(), int8_support()};
  t.fp32_bf16x3 = fp32_bf16x3_note(isa);
  return t;
}

}  // namespace ferry
