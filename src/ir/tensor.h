// ir/tensor.h — dense, contiguous, row-major tensors over shared buffers.
//
// A Tensor is a dtype, static dims and a view (offset, size) into a Buffer.
// Buffers are owned (64-byte aligned heap memory) or memory-mapped files.
// Copying a Tensor shares the buffer; clone() copies the data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/dtype.h"
#include "ir/shape.h"

namespace ferry {

/// A block of bytes: heap-owned or memory-mapped. Not copyable.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual uint8_t* data() = 0;
  virtual size_t size() const = 0;
  const uint8_t* cdata() const { return const_cast<Buffer*>(this)->data(); }
};

/// Zero-initialized, 64-byte aligned heap buffer. Fails (no throw) past `limit` bytes.
/// zero = false leaves the bytes unset, for a caller that writes every one next.
Result<std::shared_ptr<Buffer>> allocate_buffer(size_t bytes, bool zero = true);
/// Read-only memory map of [offset, offset+length) of `path`; length 0 maps nothing.
Result<std::shared_ptr<Buffer>> map_file(const std::string& path, uint64_t offset, uint64_t length);

/// Largest single tensor ferry will allocate (bytes). Protects against absurd dims.
inline constexpr size_t kMaxTensorBytes = size_t(16) << 30;

/// The allocation limit in force: kMaxTensorBytes unless lowered. A process
/// embedding ferry (a service, a fuzzer) lowers it to bound the memory a model
/// can make it allocate; allocations past it fail with a clear error.
size_t tensor_size_limit();
/// Sets the limit (clamped to kMaxTensorBytes); 0 restores the default. Thread-safe.
void set_tensor_size_limit(size_t bytes);

class Tensor {
 public:
  Tensor() = default;  ///< empty: dtype undefined, no buffer

  /// Allocates a zero-filled tensor; fails on absurd sizes instead of crashing.
  static Result<Tensor> zeros(DType dtype, std::vector<int64_t> dims);
  /// Same checks, bytes left unset: for a caller that overwrites all of them
  /// (copying raw_data of a 400 MB model twice over was the import's main cost).
  static Result<Tensor> uninitialized(DType dtype, std::vector<int64_t> dims);
  /// Allocates or aborts: for internal use where dims are already validated.
  static Tensor empty(DType dtype, std::vector<int64_t> dims);
  /// A view over an existing buffer (e.g. a memory-mapped file). Checks bounds.
  static Result<Tensor> view(DType dtype, std::vector<int64_t> dims, std::shared_ptr<Buffer> buffer,
                             size_t offset = 0);
  /// Scalar or 1-D helpers for tests and constant building.
  template <class T> static Tensor scalar(T v);
  template <class T> static Tensor from_vector(const std::vector<T>& v, std::vector<int64_t> dims);
  static Tensor from_vector(const std::vector<float>& v) { return from_vector(v, {int64_t(v.size())}); }

  bool defined() const { return dtype_ != DType::undefined; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return int64_t(dims_.size()); }
  int64_t dim(int64_t i) const { return dims_[size_t(i)]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return size_t(numel_) * dtype_size(dtype_); }
  Shape shape() const { return Shape::from_dims(dims_); }

  uint8_t* raw() { return buffer_ ? buffer_->data() + offset_ : nullptr; }
  const uint8_t* raw() const { return buffer_ ? buffer_->cdata() + offset_ : nullptr; }
  template <class T> T* data() { return reinterpret_cast<T*>(raw()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(raw()); }

  /// Same data, new dims with the same element count (shares the buffer).
  Result<Tensor> reshaped(std::vector<int64_t> dims) const;
  /// Deep copy into a fresh owned buffer.
  Tensor clone() const;
  /// Element i converted to double / int64 (any dtype; f16/bf16 decoded).
  double get_double(int64_t i) const;
  int64_t get_int(int64_t i) const;
  /// All elements as int64 (for shape-like tensors: axes, pads, shapes).
  std::vector<int64_t> to_int_vector() const;
  std::vector<double> to_double_vector() const;
  /// Element i set from a double: floats round; integers truncate toward zero, clamp to the
  /// type's range, and NaN becomes 0 (no undefined behaviour).
  void set_double(int64_t i, double v);

  /// Bitwise equality of dtype, dims and bytes.
  bool bit_equal(const Tensor& o) const;
  /// "f32[2,3]"
  std::string type_string() const;
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }

 private:
  static Result<Tensor> allocate(DType dtype, std::vector<int64_t> dims, bool zero);
  DType dtype_ = DType::undefined;
  std::vector<int64_t> dims_;
  int64_t numel_ = 0;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
};

template <class T>
Tensor Tensor::scalar(T v) {
  Tensor t = empty(dtype_of<T>(), {});
  *t.data<T>() = v;
  return t;
}

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& v, std::vector<int64_t> dims) {
  Tensor t = empty(dtype_of<T>(), std::move(dims));
  FERRY_CHECK(size_t(t.numel()) == v.size(), "from_vector: size mismatch");
  for (size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = v[i];
  return t;
}

}  // namespace ferry
