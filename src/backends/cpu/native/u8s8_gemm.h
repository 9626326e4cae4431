// backends/cpu/native/u8s8_gemm.h — exact u8 x s8 integer sums with a constant, packed
// s8 B: raw[m, n] = sum_k a[m, k] * b[k, n] in int32 (ONNX Runtime's MatMulInteger /
// dynamic quantization arithmetic; the caller applies the zero points through the row
// and column sums). vpdpbusd on AVX512_VNNI; else AVX2 vpmaddwd on int16-widened
// operands (never the saturating vpmaddubsw). Used by the int8 LSTM (lstm_int8.h) and
// the dynamically quantized MatMul step (cpu_dynamic_int8_matmul_step.h).
//
// Packing: VNNI tiles of 64 columns, [Np / 64][Kq][64][4] s8 (Kq = ceil(K / 4): a tile row
// is the 64 columns' four consecutive k, the operand of four vpdpbusd); AVX2 tiles of 32
// columns of k pairs, [Np / 32][2 Kq][32][2] int16. Columns past N and k past K are zero.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace ferry {

struct U8S8Packed {
  int64_t K = 0, Kq = 0, N = 0, Np = 0;  ///< Np: N rounded up to 64
  bool vnni = false;
  std::vector<int8_t> w;         ///< VNNI layout
  std::vector<int16_t> w16;      ///< AVX2 layout
  std::vector<int32_t> colsum;   ///< [Np] sum over k of each column's codes
};

/// Packs B [K, N]: code(k, n) in [-128, 127].
U8S8Packed u8s8_pack(int64_t K, int64_t N, bool vnni, const std::function<int32_t(int64_t, int64_t)>& code);

/// Bytes per activation row the sums read (Kq * 4; the row is zero past K).
inline int64_t u8s8_row_bytes(const U8S8Packed& p) { return p.Kq * 4; }

/// Column tiles of 64 (the unit to split the work in).
inline int64_t u8s8_tiles(const U8S8Packed& p) { return p.Np / 64; }

/// raw[m, n] for rows [0, M) of a (u8 rows of lda bytes) and the columns of tiles
/// [t0, t1); acc rows have Np int32. Needs AVX2 (and AVX512_VNNI for a VNNI packing).
void u8s8_sums(const uint8_t* a, int64_t lda, int64_t M, const U8S8Packed& p, int32_t* acc, int64_t t0, int64_t t1);

/// The CPU has AVX512_VNNI (and the OS enabled it).
bool u8s8_host_has_vnni512();

}  // namespace ferry
