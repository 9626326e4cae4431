#include "ir/dtype.h"

#include <cmath>

namespace ferry {

size_t dtype_size(DType t) {
  switch (t) {
#define FERRY_DTYPE_SIZE(e, ty, n) \
  case DType::e:                   \
    return sizeof(ty);
    FERRY_DTYPES(FERRY_DTYPE_SIZE)
#undef FERRY_DTYPE_SIZE
    default:
      return 0;
  }
}

const char* dtype_name(DType t) {
  switch (t) {
#define FERRY_DTYPE_NAME(e, ty, n) \
  case DType::e:                   \
    return n;
    FERRY_DTYPES(FERRY_DTYPE_NAME)
#undef FERRY_DTYPE_NAME
    default:
      return "undefined";
  }
}

std::optional<DType> dtype_from_name(std::string_view name) {
#define FERRY_DTYPE_PARSE(e, ty, n) \
  if (name == n) return DType::e;
  FERRY_DTYPES(FERRY_DTYPE_PARSE)
#undef FERRY_DTYPE_PARSE
  return std::nullopt;
}

bool is_floating(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64; }
bool is_integer(DType t) {
  switch (t) {
    case DType::i8: case DType::u8: case DType::i16: case DType::u16:
    case DType::i32: case DType::u32: case DType::i64: case DType::u64:
      return true;
    default:
      return false;
  }
}
bool is_signed(DType t) {
  return is_floating(t) || t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64;
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do { ++e; mant <<= 1; } while ((mant & 0x400) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000) {  // inf or nan
    return uint16_t(sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 | ((absx >> 13) & 0x3ff) : 0));
  }
  if (absx >= 0x477ff000) return uint16_t(sign | 0x7c00);  // rounds to >= 65520: inf
  if (absx < 0x38800000) {  // below the smallest normal half: subnormal or zero
    // value = absx as float; half subnormal unit = 2^-24
    float af;
    std::memcpy(&af, &absx, 4);
    float scaled = af * 16777216.0f;  // / 2^-24
    uint32_t m = uint32_t(std::nearbyint(scaled));  // round half to even (default mode)
    return uint16_t(sign | m);
  }
  uint32_t exp = ((absx >> 23) - 127 + 15) << 10;
  uint32_t mant = absx & 0x7fffff;
  uint32_t h = exp | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // carries into exponent correctly
  return uint16_t(sign | h);
}

uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return uint16_t((x + rounding) >> 16);
}

}  // namespace ferry
