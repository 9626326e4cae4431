// ir/dtype.h — element types of tensors, and f16/bf16 conversions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace ferry {

// X(enum, C++ storage type, text name)
#define FERRY_DTYPES(X)        \
  X(f32, float, "f32")         \
  X(f16, uint16_t, "f16")      \
  X(bf16, uint16_t, "bf16")    \
  X(f64, double, "f64")        \
  X(i8, int8_t, "i8")          \
  X(u8, uint8_t, "u8")         \
  X(i16, int16_t, "i16")       \
  X(u16, uint16_t, "u16")      \
  X(i32, int32_t, "i32")       \
  X(u32, uint32_t, "u32")      \
  X(i64, int64_t, "i64")       \
  X(u64, uint64_t, "u64")      \
  X(boolean, bool, "bool")

enum class DType : uint8_t {
  undefined = 0,
#define FERRY_DTYPE_ENUM(e, t, n) e,
  FERRY_DTYPES(FERRY_DTYPE_ENUM)
#undef FERRY_DTYPE_ENUM
};

/// Bytes per element; 0 for undefined.
size_t dtype_size(DType t);
/// "f32", "bool", ...; "undefined" for undefined.
const char* dtype_name(DType t);
/// Inverse of dtype_name.
std::optional<DType> dtype_from_name(std::string_view name);

bool is_floating(DType t);  ///< f32 f16 bf16 f64
bool is_integer(DType t);   ///< i8..u64 (not bool)
bool is_signed(DType t);    ///< floats and signed integers

/// Maps a C++ type to its DType: dtype_of<float>() == DType::f32.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<int8_t>() { return DType::i8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::i16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::u32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::u64; }
template <> constexpr DType dtype_of<bool>() { return DType::boolean; }
// u16, f16 and bf16 all store uint16_t; use DType directly for those.

/// IEEE binary16 <-> f32, round to nearest even.
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
/// bfloat16 <-> f32, round to nearest even; NaN stays NaN.
inline float bf16_to_f32(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_bf16(float f);

/// Calls fn(T{}) with T the storage type of `t` (uint16_t for f16/bf16/u16).
/// Usage: dispatch_dtype(t, [&](auto tag) { using T = decltype(tag); ... });
template <class Fn>
decltype(auto) dispatch_dtype(DType t, Fn&& fn) {
  switch (t) {
#define FERRY_DTYPE_CASE(e, ty, n) \
  case DType::e:                   \
    return fn(ty{});
    FERRY_DTYPES(FERRY_DTYPE_CASE)
#undef FERRY_DTYPE_CASE
    default:
      return fn(float{});  // undefined: callers check before dispatching
  }
}

}  // namespace ferry
