// Repairs of ONNX Runtime's weight-only quantized contrib ops (com.microsoft):
//   MatMulNBits(A, B, scales [, zero_points] [, g_idx] [, bias]) = A @ W^T (+ bias)
// where W [N, K] is B dequantized: B holds, per output column n and block b of
// `block_size` values along K, the block's `bits`-bit codes packed low bits first
// into bytes ([N, k_blocks, block_size * bits / 8]); W[n, k] = (q - zp) * scale with
// the block's scale and zero point (uint8 codes packed the same way, or values of
// A's type; default 2^(bits-1)). g_idx (act order) is refused. ferry has no low-bit kernels: the weights are dequantized once at
// import into an f32 constant [K, N] and the op becomes MatMul (+ Add), computed at
// ONNX Runtime's most accurate level (its accuracy_level 4 quantizes A to int8 and
// then differs by that rounding).
#include "repair/contrib_rules.h"
#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

using onnx_import::OnnxNode;

struct NBitsShape {
  int64_t k = 0, n = 0, bits = 4, block = 0, k_blocks = 0, blob = 0;
};

NBitsShape nbits_shape(const OnnxNode& n) {
  NBitsShape s;
  s.k = attr_int(n, "K").value_or(0);
  s.n = attr_int(n, "N").value_or(0);
  s.bits = attr_int(n, "bits").value_or(4);
  s.block = attr_int(n, "block_size").value_or(0);
  if (s.block > 0) s.k_blocks = (s.k + s.block - 1) / s.block;
  s.blob = s.block * s.bits / 8;
  return s;
}

/// Code j of a packed little-endian stream of `bits`-bit codes.
int64_t code(const uint8_t* p, int64_t j, int64_t bits) {
  const int64_t per_byte = 8 / bits;
  return (p[j / per_byte] >> ((j % per_byte) * bits)) & ((1 << bits) - 1);
}

std::string shape_mismatch(const Tensor* t, const char* what, int64_t want) {
  if (!t) return std::string(what) + " is not a constant (initializer)";
  if (t->numel() != want)
    return std::string(what) + " has " + std::to_string(t->numel()) + " elements, " + std::to_string(want) + " expected";
  return "";
}

}  // namespace

std::string why_not_MatMulNBits(const OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, {"K", "N", "bits", "block_size", "accuracy_level"}),
                            input_count(n, 3, 6), not_f32(n, {0})});
  if (!r.empty()) return r;
  const NBitsShape s = nbits_shape(n);
  if (s.k <= 0 || s.n <= 0) return "attributes K and N must be positive";
  if (s.bits != 2 && s.bits != 4 && s.bits != 8) return "bits = " + std::to_string(s.bits) + " is not handled (2, 4, 8 are)";
  if (s.block < 16 || (s.block & (s.block - 1))) return "block_size must be a power of 2, at least 16";
  if (s.k * s.n > (int64_t(1) << 31)) return "the dequantized f32 weights would exceed 8 GiB";
  const Tensor* b = n.constant_input(1);
  if (b && b->dtype() != DType::u8) return "B is not uint8";
  if (std::string e = shape_mismatch(b, "B", s.n * s.k_blocks * s.blob); !e.empty()) return e;
  const Tensor* scales = n.constant_input(2);
  if (std::string e = shape_mismatch(scales, "scales", s.n * s.k_blocks); !e.empty()) return e;
  if (scales->dtype() != DType::f32) return "scales are not f32";
  if (n.input(3)) {
    const Tensor* zp = n.constant_input(3);
    if (zp && zp->dtype() == DType::u8) {
      const int64_t per_row = (s.k_blocks * s.bits + 7) / 8;
      if (std::string e = shape_mismatch(zp, "zero_points", s.n * per_row); !e.empty()) return e;
    } else if (zp && zp->dtype() == DType::f32) {
      if (std::string e = shape_mismatch(zp, "zero_points", s.n * s.k_blocks); !e.empty()) return e;
    } else {
      return "zero_points must be a uint8 or f32 constant";
    }
  }
  // ONNX Runtime's CPU kernel changes its result even for g_idx = k / block_size (measured with
  // onnxruntime 1.32), so its act-order layout is not the one documented: not handled.
  if (n.input(4)) return "g_idx (act-order quantization) is not handled";
  if (n.input(5)) {
    if (std::string e = not_f32(n, {5}); !e.empty()) return e;
  }
  return "";
}

Status repair_MatMulNBits(OnnxNode& n) {
  const NBitsShape s = nbits_shape(n);
  for (const char* a : {"K", "N", "bits", "block_size", "accuracy_level"}) n.ignore(a);
  const Tensor& b = *n.constant_input(1);
  const Tensor& scales = *n.constant_input(2);
  const Tensor* zp = n.input(3) ? n.constant_input(3) : nullptr;
  const uint8_t* q = b.data<uint8_t>();
  const int64_t zp_row = (s.k_blocks * s.bits + 7) / 8, default_zp = int64_t(1) << (s.bits - 1);
  Tensor w = Tensor::empty(DType::f32, {s.k, s.n});  // W^T: MatMul's [K, N] right-hand side
  float* out = w.data<float>();
  for (int64_t col = 0; col < s.n; ++col) {
    const uint8_t* row = q + col * s.k_blocks * s.blob;
    for (int64_t k = 0; k < s.k; ++k) {
      const int64_t blk = k / s.block;
      const float scale = scales.data<float>()[col * s.k_blocks + blk];
      double z = double(default_zp);
      if (zp && zp->dtype() == DType::u8) z = double(code(zp->data<uint8_t>() + col * zp_row, blk, s.bits));
      if (zp && zp->dtype() == DType::f32) z = zp->data<float>()[col * s.k_blocks + blk];
      const int64_t c = code(row + (k / s.block) * s.blob, k % s.block, s.bits);
      out[k * s.n + col] = float((double(c) - z) * scale);
    }
  }
  Value* weights = n.constant(std::move(w), "dequantized_B");
  if (!n.input(5)) {
    n.set_output(0, n.emit(Op::MatMul, {n.input(0), weights})->output(0));
  } else {
    Value* y = helper(n, Op::MatMul, {n.input(0), weights});
    n.set_output(0, n.emit(Op::Add, {y, n.input(5)})->output(0));
  }
  return Status::Ok();
}

}  // namespace ferry::repair
