#include "ir/tensor.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

namespace ferry {
namespace {

class OwnedBuffer final : public Buffer {
 public:
  OwnedBuffer(uint8_t* p, size_t n) : p_(p), n_(n) {}
  ~OwnedBuffer() override { std::free(p_); }
  uint8_t* data() override { return p_; }
  size_t size() const override { return n_; }

 private:
  uint8_t* p_;
  size_t n_;
};

class MappedBuffer final : public Buffer {
 public:
  MappedBuffer(void* base, size_t map_len, size_t skew, size_t n)
      : base_(base), map_len_(map_len), skew_(skew), n_(n) {}
  ~MappedBuffer() override {
    if (base_) munmap(base_, map_len_);
  }
  uint8_t* data() override { return static_cast<uint8_t*>(base_) + skew_; }
  size_t size() const override { return n_; }

 private:
  void* base_;
  size_t map_len_, skew_, n_;
};

}  // namespace

namespace {
std::atomic<size_t> g_tensor_size_limit{kMaxTensorBytes};
}  // namespace

size_t tensor_size_limit() { return g_tensor_size_limit.load(std::memory_order_relaxed); }

void set_tensor_size_limit(size_t bytes) {
  g_tensor_size_limit.store(bytes == 0 ? kMaxTensorBytes : std::min(bytes, kMaxTensorBytes),
                            std::memory_order_relaxed);
}

Result<std::shared_ptr<Buffer>> allocate_buffer(size_t bytes, bool zero) {
  const size_t limit = tensor_size_limit();
  if (bytes > limit)
    return invalid_model("tensor of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                         std::to_string(limit) + " bytes");
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) return invalid_model("out of memory allocating " + std::to_string(bytes) + " bytes");
  if (zero) {
    std::memset(p, 0, rounded);
  } else if (rounded > bytes) {
    std::memset(static_cast<uint8_t*>(p) + bytes, 0, rounded - bytes);  // the padding is never garbage
  }
  return std::shared_ptr<Buffer>(std::make_shared<OwnedBuffer>(static_cast<uint8_t*>(p), bytes));
}

Result<std::shared_ptr<Buffer>> map_file(const std::string& path, uint64_t offset, uint64_t length) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    return io_error("cannot stat '" + path + "'");
  }
  uint64_t fsize = uint64_t(st.st_size);
  if (offset > fsize || length > fsize - offset) {
    ::close(fd);
    return invalid_model("'" + path + "': range [" + std::to_string(offset) + ", +" + std::to_string(length) +
                         ") lies beyond the end of the file (" + std::to_string(fsize) + " bytes)");
  }
  if (length == 0) {
    ::close(fd);
    return allocate_buffer(0);
  }
  long page = sysconf(_SC_PAGESIZE);
  uint64_t aligned = offset / uint64_t(page) * uint64_t(page);
  size_t skew = size_t(offset - aligned);
  size_t map_len = size_t(length) + skew;
  void* base = mmap(nullptr, map_len, PROT_READ, MAP_PRIVATE, fd, off_t(aligned));
  ::close(fd);
  if (base == MAP_FAILED) return io_error("cannot map '" + path + "': " + std::strerror(errno));
  return std::shared_ptr<Buffer>(std::make_shared<MappedBuffer>(base, map_len, skew, size_t(length)));
}

Result<Tensor> Tensor::zeros(DType dtype, std::vector<int64_t> dims) { return allocate(dtype, std::move(dims), true); }

Result<Tensor> Tensor::uninitialized(DType dtype, std::vector<int64_t> dims) {
  return allocate(dtype, std::move(dims), false);
}

Result<Tensor> Tensor::allocate(DType dtype, std::vector<int64_t> dims, bool zero) {
  if (dtype == DType::undefined) return invalid_model("tensor with undefined dtype");
  auto n = checked_numel(dims);
  if (!n) return invalid_model("tensor dims [" + dims_to_string(dims, ',') + "] are negative or too large");
  if (size_t(*n) > tensor_size_limit() / dtype_size(dtype))
    return invalid_model("tensor " + std::string(dtype_name(dtype)) + "[" + dims_to_string(dims, ',') +
                         "] exceeds the size limit of " + std::to_string(tensor_size_limit()) + " bytes");
  FERRY_ASSIGN_OR_RETURN(auto buf, allocate_buffer(size_t(*n) * dtype_size(dtype), zero));
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.numel_ = *n;
  t.buffer_ = std::move(buf);
  return t;
}

Tensor Tensor::empty(DType dtype, std::vector<int64_t> dims) {
  auto r = zeros(dtype, std::move(dims));
  FERRY_CHECK(r.ok(), r.status().to_string());
  return std::move(r).value();
}

Result<Tensor> Tensor::view(DType dtype, std::vector<int64_t> dims, std::shared_ptr<Buffer> buffer,
                            size_t offset) {
  if (dtype == DType::undefined) return invalid_model("tensor with undefined dtype");
  auto n = checked_numel(dims);
  if (!n) return invalid_model("tensor dims [" + dims_to_string(dims, ',') + "] are negative or too large");
  size_t bytes = size_t(*n) * dtype_size(dtype);
  if (!buffer || offset > buffer->size() || bytes > buffer->size() - offset)
    return invalid_model("tensor " + std::string(dtype_name(dtype)) + "[" + dims_to_string(dims, ',') +
                         "] needs " + std::to_string(bytes) + " bytes but its data has " +
                         std::to_string(buffer ? buffer->size() - std::min(offset, buffer->size()) : 0));
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.numel_ = *n;
  t.buffer_ = std::move(buffer);
  t.offset_ = offset;
  return t;
}

Result<Tensor> Tensor::reshaped(std::vector<int64_t> dims) const {
  auto n = checked_numel(dims);
  if (!n || *n != numel_)
    return invalid_model("cannot reshape " + type_string() + " to [" + dims_to_string(dims, ',') + "]");
  Tensor t = *this;
  t.dims_ = std::move(dims);
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor t = empty(dtype_, dims_);
  if (nbytes()) std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

namespace {
// double -> integer, truncating toward zero like a C++ cast, but defined for
// every input (the plain cast is undefined behavior out of range): NaN -> 0,
// out-of-range values clamp to the type's limits.
template <class T>
T truncate_to_int(double v) {
  if (std::isnan(v)) return 0;
  // min is a power of two (exact); max of a 64-bit type rounds up to 2^63 / 2^64,
  // hence >= so that values at the rounded bound also clamp.
  constexpr double lo = double(std::numeric_limits<T>::min());
  constexpr double hi = double(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::min();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
}  // namespace

double Tensor::get_double(int64_t i) const {
  switch (dtype_) {
    case DType::f16: return f16_to_f32(data<uint16_t>()[i]);
    case DType::bf16: return bf16_to_f32(data<uint16_t>()[i]);
    case DType::boolean: return data<uint8_t>()[i] != 0;  // any nonzero byte is true
    default:
      return dispatch_dtype(dtype_, [&](auto tag) { return double(data<decltype(tag)>()[i]); });
  }
}

int64_t Tensor::get_int(int64_t i) const {
  switch (dtype_) {
    case DType::f16: case DType::bf16: case DType::f32: case DType::f64:
      return truncate_to_int<int64_t>(get_double(i));
    case DType::boolean: return data<uint8_t>()[i] != 0;
    case DType::u64: {
      uint64_t v = data<uint64_t>()[i];
      return v > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(v);
    }
    default:
      return dispatch_dtype(dtype_, [&](auto tag) { return int64_t(data<decltype(tag)>()[i]); });
  }
}

std::vector<int64_t> Tensor::to_int_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[size_t(i)] = get_int(i);
  return v;
}

std::vector<double> Tensor::to_double_vector() const {
  std::vector<double> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[size_t(i)] = get_double(i);
  return v;
}

void Tensor::set_double(int64_t i, double v) {
  switch (dtype_) {
    case DType::f16: data<uint16_t>()[i] = f32_to_f16(float(v)); return;
    case DType::bf16: data<uint16_t>()[i] = f32_to_bf16(float(v)); return;
    case DType::boolean: data<bool>()[i] = v != 0; return;
    case DType::f32: data<float>()[i] = float(v); return;
    case DType::f64: data<double>()[i] = v; return;
    default:
      dispatch_dtype(dtype_, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) data<T>()[i] = truncate_to_int<T>(v);
      });
  }
}

bool Tensor::bit_equal(const Tensor& o) const {
  if (dtype_ != o.dtype_ || dims_ != o.dims_) return false;
  return nbytes() == 0 || std::memcmp(raw(), o.raw(), nbytes()) == 0;
}

std::string Tensor::type_string() const {
  return std::string(dtype_name(dtype_)) + "[" + dims_to_string(dims_, ',') + "]";
}

}  // namespace ferry
