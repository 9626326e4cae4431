#include "ir/shape.h"

namespace ferry {

bool Dim::same_as(const Dim& o) const {
  if (is_static() && o.is_static()) return value_ == o.value_;
  if (is_symbol() && o.is_symbol()) return symbol_ == o.symbol_;
  return false;
}

std::string Dim::to_string() const {
  if (is_static()) return std::to_string(value_);
  if (is_symbol()) return symbol_;
  return "?";
}

Shape::Shape(std::initializer_list<int64_t> dims) : rank_known_(true) {
  for (int64_t d : dims) dims_.emplace_back(d);
}

Shape Shape::from_dims(const std::vector<int64_t>& dims) {
  std::vector<Dim> d(dims.begin(), dims.end());
  return Shape(std::move(d));
}

bool Shape::is_static() const {
  if (!rank_known_) return false;
  for (const Dim& d : dims_)
    if (!d.is_static()) return false;
  return true;
}

std::vector<int64_t> Shape::static_dims() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const Dim& d : dims_) out.push_back(d.value());
  return out;
}

std::optional<int64_t> Shape::numel() const {
  if (!is_static()) return std::nullopt;
  return checked_numel(static_dims());
}

std::string Shape::to_string() const {
  if (!rank_known_) return "[*]";
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += dims_[i].to_string();
  }
  return s + "]";
}

std::optional<int64_t> checked_numel(const std::vector<int64_t>& dims) {
  // Validate every dim and look for a zero first: [2^40, 2^40, 0] has 0 elements,
  // so the overflow check must not run before the zero is seen.
  bool has_zero = false;
  for (int64_t d : dims) {
    if (d < 0 || d > kMaxDim) return std::nullopt;
    has_zero |= d == 0;
  }
  if (has_zero) return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (n > kMaxDim / d) return std::nullopt;
    n *= d;
  }
  return n;
}

std::string dims_to_string(const std::vector<int64_t>& dims, char sep) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(dims[i]);
  }
  return s;
}

}  // namespace ferry
