// ir/shape.h — shapes with symbolic dimensions.
//
// A Dim is a known size (>= 0), a named symbol ("N", "seq") or unknown ("?").
// Two symbolic dims with the same name are equal. A Shape may have unknown rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferry {

/// Upper bound on any dimension and on any element count; larger is a model error.
inline constexpr int64_t kMaxDim = int64_t(1) << 40;

class Dim {
 public:
  Dim() = default;                                  ///< unknown
  Dim(int64_t v) : value_(v < 0 ? -1 : v) {}       // NOLINT: implicit from a size; negative = unknown
  static Dim symbol(std::string name) { Dim d; d.symbol_ = std::move(name); return d; }
  static Dim unknown() { return Dim(); }

  bool is_static() const { return value_ >= 0; }
  bool is_symbol() const { return value_ < 0 && !symbol_.empty(); }
  bool is_unknown() const { return value_ < 0 && symbol_.empty(); }
  int64_t value() const { return value_; }          ///< -1 unless static
  const std::string& symbol() const { return symbol_; }

  /// Known to be equal: same static value or same symbol name.
  bool same_as(const Dim& o) const;
  bool operator==(const Dim& o) const { return value_ == o.value_ && symbol_ == o.symbol_; }
  std::string to_string() const;  ///< "3", "N", "?"

 private:
  int64_t value_ = -1;
  std::string symbol_;
};

class Shape {
 public:
  Shape() = default;  ///< unknown rank
  Shape(std::vector<Dim> dims) : dims_(std::move(dims)), rank_known_(true) {}  // NOLINT
  Shape(std::initializer_list<int64_t> dims);
  static Shape from_dims(const std::vector<int64_t>& dims);
  static Shape unknown_rank() { return Shape(); }

  bool rank_known() const { return rank_known_; }
  int64_t rank() const { return int64_t(dims_.size()); }  ///< 0 when rank unknown; check rank_known()
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& dims() { return dims_; }
  const Dim& operator[](size_t i) const { return dims_[i]; }
  Dim& operator[](size_t i) { return dims_[i]; }

  bool is_static() const;  ///< rank known and every dim static
  /// Static dims as integers; only valid when is_static().
  std::vector<int64_t> static_dims() const;
  /// Product of dims, or nullopt when not static or overflowing kMaxDim.
  std::optional<int64_t> numel() const;

  bool operator==(const Shape& o) const { return rank_known_ == o.rank_known_ && dims_ == o.dims_; }
  std::string to_string() const;  ///< "[N,3,224,224]", "[]" (scalar), "[*]" (unknown rank)

 private:
  std::vector<Dim> dims_;
  bool rank_known_ = false;
};

/// Product of static dims with overflow check; nullopt if any dim < 0 or product > kMaxDim.
std::optional<int64_t> checked_numel(const std::vector<int64_t>& dims);

/// "1x3x224x224" for static dims.
std::string dims_to_string(const std::vector<int64_t>& dims, char sep = 'x');

}  // namespace ferry
