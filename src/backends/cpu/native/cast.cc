// backends/cpu/native/cast.cc — Cast between f32, f64, the integers and bool, with the
// reference's rules (ops/cast.cc): float -> int truncates toward zero, NaN -> 0, out of
// range saturates; int -> float rounds once; int -> int wraps; x -> bool is x != 0;
// bool -> x is 0 / 1; f32 <-> bf16 as ir/dtype.h converts (nearest even, NaN stays NaN,
// subnormals kept: the precision pass's rounding pairs). Other f16 / bf16 casts run on the
// reference kernel. Split across threads.
#include <algorithm>
#include <cmath>
#include <immintrin.h>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/bf16_round.h"
#include "backends/cpu/native/simd_math.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int64_t kCastParallelMin = 1 << 15;

template <class O, class I>
O cast_one_native(I x) {
  if constexpr (std::is_same_v<O, bool>) {
    return x != I(0);
  } else if constexpr (std::is_floating_point_v<O>) {
    return O(x);
  } else if constexpr (std::is_floating_point_v<I>) {
    const double v = double(x);
    if (std::isnan(v)) return O(0);
    if (v <= double(std::numeric_limits<O>::lowest())) return std::numeric_limits<O>::lowest();
    if (v >= double(std::numeric_limits<O>::max())) return std::numeric_limits<O>::max();
    return O(v);
  } else {
    return O(x);  // modular (C++20)
  }
}

template <class I, class O>
void cast_loop_native(const I* in, O* out, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kCastParallelMin)
  for (int64_t i = 0; i < n; ++i) out[i] = cast_one_native<O>(in[i]);
}

/// Calls f(T{}) for the C++ type of `t`; false for f16, bf16 and undefined.
template <class F>
bool cast_visit_native(DType t, F&& f) {
  switch (t) {
    case DType::f32: f(float{}); return true;
    case DType::f64: f(double{}); return true;
    case DType::i8: f(int8_t{}); return true;
    case DType::u8: f(uint8_t{}); return true;
    case DType::i16: f(int16_t{}); return true;
    case DType::u16: f(uint16_t{}); return true;
    case DType::i32: f(int32_t{}); return true;
    case DType::u32: f(uint32_t{}); return true;
    case DType::i64: f(int64_t{}); return true;
    case DType::u64: f(uint64_t{}); return true;
    case DType::boolean: f(bool{}); return true;
    default: return false;
  }
}

bool cast_native_dtype(DType t) { return cast_visit_native(t, [](auto) {}); }

/// f32 -> bf16 or bf16 -> f32 (the pairs emulate_precision writes).
bool cast_is_bf16_pair(DType from, DType to) {
  return (from == DType::f32 && to == DType::bf16) || (from == DType::bf16 && to == DType::f32);
}

inline float cast_bf16_bits_to_f32(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Plain loops (generic) and AVX2 / AVX-512 ones with the same integer rounding (not
// vcvtneps2bf16, which flushes subnormals); separate functions, so omp bodies only call them.
void cast_f32_bf16_chunk_generic(const float* in, uint16_t* out, int64_t n) {
  // ir/dtype.cc's f32_to_bf16 inline (native/bf16_round.h), so the loop vectorizes;
  // OnednnBf16Steps.CastStepsRoundLikeTheInterpreter checks it bit for bit.
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits(in[i]);
}

void cast_bf16_f32_chunk_generic(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = cast_bf16_bits_to_f32(in[i]);
}

FERRY_TARGET_AVX2 void cast_f32_bf16_chunk_avx2(const float* in, uint16_t* out, int64_t n) {
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  const __m256i abs = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000), quiet = _mm256_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i hi = _mm256_srli_epi32(x, 16);
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, bias), _mm256_and_si256(hi, one)), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs), inf);  // |x| <= 0x7fffffff: signed is fine
    r = _mm256_blendv_epi8(r, _mm256_or_si256(hi, quiet), nan);
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);  // r <= 0xffff
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(packed));
  }
  cast_f32_bf16_chunk_generic(in + i, out + i, n - i);
}

FERRY_TARGET_AVX2 void cast_bf16_f32_chunk_avx2(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
  }
  cast_bf16_f32_chunk_generic(in + i, out + i, n - i);
}

FERRY_TARGET_AVX512 void cast_f32_bf16_chunk_avx512(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), bf16_bits_avx512(_mm512_loadu_ps(in + i)));
  cast_f32_bf16_chunk_generic(in + i, out + i, n - i);
}

FERRY_TARGET_AVX512 void cast_bf16_f32_chunk_avx512(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_si512(out + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16));
  }
  cast_bf16_f32_chunk_generic(in + i, out + i, n - i);
}

struct CastBf16Chunks {
  void (*to_bf16)(const float*, uint16_t*, int64_t);
  void (*to_f32)(const uint16_t*, float*, int64_t);
  const char* suffix;
};

CastBf16Chunks cast_bf16_chunks(Isa isa) {
  isa = std::min(isa, host_isa());
  if (isa >= Isa::avx512) return {cast_f32_bf16_chunk_avx512, cast_bf16_f32_chunk_avx512, "avx512"};
  if (isa >= Isa::avx2) return {cast_f32_bf16_chunk_avx2, cast_bf16_f32_chunk_avx2, "avx2"};
  return {cast_f32_bf16_chunk_generic, cast_bf16_f32_chunk_generic, "generic"};
}

constexpr int64_t kCastBf16Chunk = 1 << 14;

/// n elements f32 -> bf16 (`from` f32), bf16 -> f32, or bf16 -> bf16 (`to` bf16 too: a copy),
/// in chunks of kCastBf16Chunk split across threads.
void cast_bf16_buffer(DType from, DType to, const void* x, void* y, int64_t n, const CastBf16Chunks& k) {
  if (from == to) {
    std::memcpy(y, x, size_t(n) * dtype_size(from));
    return;
  }
  const int64_t chunks = (n + kCastBf16Chunk - 1) / kCastBf16Chunk;
  const bool down = from == DType::f32;
#pragma omp parallel for schedule(static) if (n >= kCastParallelMin)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t b = c * kCastBf16Chunk, len = std::min(kCastBf16Chunk, n - b);
    if (down)
      k.to_bf16(static_cast<const float*>(x) + b, static_cast<uint16_t*>(y) + b, len);
    else
      k.to_f32(static_cast<const uint16_t*>(x) + b, static_cast<float*>(y) + b, len);
  }
}

void cast_bf16_pair(const Tensor& x, Tensor& y) {
  cast_bf16_buffer(x.dtype(), y.dtype(), x.raw(), y.data<uint16_t>(), x.numel(), cast_bf16_chunks(host_isa()));
}

/// cast_bf16_buffer over the whole buffer of one layout (blocked ones with their padding).
class CastBf16Step : public Step {
 public:
  CastBf16Step(DType from, DType to, int64_t count, CastBf16Chunks chunks, std::string name)
      : from_(from), to_(to), count_(count), chunks_(chunks), name_(std::move(name)) {}
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const CastBf16Step& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      cast_bf16_buffer(s_.from_, s_.to_, io_->inputs[0]->raw(), io_->outputs[0]->raw(), s_.count_, s_.chunks_);
      return Status::Ok();
    }

   private:
    const CastBf16Step& s_;
    StepIO* io_;
  };
  DType from_, to_;
  int64_t count_;
  CastBf16Chunks chunks_;
  std::string name_;
};

}  // namespace

std::unique_ptr<Step> make_cast_bf16_step(DType from, DType to, int64_t count, const std::string& layout, Isa isa) {
  const CastBf16Chunks k = cast_bf16_chunks(isa);
  return std::make_unique<CastBf16Step>(from, to, count, k, std::string("cast_") + dtype_name(from) + "_" +
                                                                dtype_name(to) + "_" + layout + "__" + k.suffix);
}

bool cpu_kernel_accepts_cast(const Node& n, const std::vector<const Tensor*>&, const std::vector<std::vector<int64_t>>&) {
  if (!n.input(0)) return false;
  std::optional<DType> to = dtype_from_name(n.attrs<CastAttrs>().to);
  if (to && cast_is_bf16_pair(n.input(0)->dtype(), *to)) return true;
  return to && cast_native_dtype(n.input(0)->dtype()) && cast_native_dtype(*to);
}

Status cast__generic(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.numel() != x.numel()) return internal_error("native cast: output size");
  if (cast_is_bf16_pair(x.dtype(), y.dtype())) {
    cast_bf16_pair(x, y);
    return Status::Ok();
  }
  bool done = false;
  cast_visit_native(x.dtype(), [&](auto i) {
    using I = decltype(i);
    done = cast_visit_native(y.dtype(), [&](auto o) {
      using O = decltype(o);
      cast_loop_native(x.data<I>(), y.data<O>(), x.numel());
    });
  });
  return done ? Status::Ok() : op_reference_kernel(Op::Cast)(ctx);
}

}  // namespace ferry
