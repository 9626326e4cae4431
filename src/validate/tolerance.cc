#include "validate/tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace ferry::validate {
namespace {

/// A finite, non-negative number, or nullopt ("1e-3" ok; "abc", "-1", "nan", "1e-3x" not).
std::optional<double> parse_tolerance(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

}  // namespace

ToleranceTable::ToleranceTable() {
  table_[DType::f64] = {1e-9, 1e-7};
  table_[DType::f32] = {1e-3, 1e-3};
  table_[DType::f16] = {1e-2, 1e-2};
  table_[DType::bf16] = {5e-2, 5e-2};
  // Integers and bool: absent from the table, hence exact.
}

Tolerance ToleranceTable::get(DType dtype) const {
  auto it = table_.find(dtype);
  return it == table_.end() ? Tolerance{} : it->second;
}

void ToleranceTable::set_float_atol(double atol) {
  for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16}) table_[d].atol = atol;
}

void ToleranceTable::set_float_rtol(double rtol) {
  for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16}) table_[d].rtol = rtol;
}

Status ToleranceTable::apply_override(const std::string& text) {
  const std::string form = "'" + text + "' is not of the form DTYPE=ATOL,RTOL (e.g. f16=1e-2,1e-2)";
  size_t eq = text.find('=');
  if (eq == std::string::npos) return invalid_argument(form);
  std::string name = text.substr(0, eq), rest = text.substr(eq + 1);
  size_t comma = rest.find(',');
  if (comma == std::string::npos) return invalid_argument(form);
  std::optional<DType> dtype = dtype_from_name(name);
  if (!dtype || *dtype == DType::undefined)
    return invalid_argument("'" + text + "': unknown dtype '" + name + "' (f32, f16, bf16, f64, i8 ... u64, bool)");
  auto atol = parse_tolerance(rest.substr(0, comma));
  auto rtol = parse_tolerance(rest.substr(comma + 1));
  if (!atol || !rtol) return invalid_argument("'" + text + "': tolerances must be finite numbers >= 0");
  table_[*dtype] = {*atol, *rtol};
  return Status::Ok();
}

Tolerance tolerance_for(const ToleranceTable& table, DType got, DType ref) {
  Tolerance a = table.get(got), b = table.get(ref);
  return {std::max(a.atol, b.atol), std::max(a.rtol, b.rtol)};
}

}  // namespace ferry::validate
