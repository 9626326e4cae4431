#include "ir/dim_product.h"

#include <algorithm>

namespace ferry {
namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// `name` split at '*'; a name without '*' is one factor.
std::vector<std::string> factors(const std::string& name) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t star = name.find('*'); star != std::string::npos; star = name.find('*', start)) {
    out.push_back(name.substr(start, star - start));
    start = star + 1;
  }
  out.push_back(name.substr(start));
  return out;
}

}  // namespace

std::optional<DimProduct> as_product(const Dim& d) {
  if (d.is_static()) return DimProduct{d.value(), {}};
  if (!d.is_symbol()) return std::nullopt;
  std::vector<std::string> fs = factors(d.symbol());
  if (fs.size() == 1) return DimProduct{1, {d.symbol()}};  // a plain name, even "12"
  DimProduct p;
  for (std::string& f : fs) {
    if (f.empty()) return DimProduct{1, {d.symbol()}};  // "a**b", "*a": not a product, one plain name
    if (!all_digits(f)) {
      p.symbols.push_back(std::move(f));
      continue;
    }
    if (f.size() > 13) return std::nullopt;  // beyond kMaxDim
    const int64_t v = std::stoll(f);
    if (v != 0 && p.coef > kMaxDim / v) return std::nullopt;
    p.coef *= v;
  }
  std::sort(p.symbols.begin(), p.symbols.end());
  return p;
}

Dim to_dim(const DimProduct& p) {
  if (p.coef == 0) return Dim(0);
  if (p.symbols.empty()) return Dim(p.coef);
  std::string name = p.coef == 1 ? "" : std::to_string(p.coef);
  for (const std::string& s : p.symbols) name += (name.empty() ? "" : "*") + s;
  return Dim::symbol(std::move(name));
}

Dim dim_times(const Dim& a, const Dim& b) {
  auto pa = as_product(a), pb = as_product(b);
  if (!pa || !pb) return Dim::unknown();
  if (pa->coef == 0 || pb->coef == 0) return Dim(0);
  if (pa->coef > kMaxDim / pb->coef) return Dim::unknown();
  DimProduct p{pa->coef * pb->coef, pa->symbols};
  p.symbols.insert(p.symbols.end(), pb->symbols.begin(), pb->symbols.end());
  std::sort(p.symbols.begin(), p.symbols.end());
  return to_dim(p);
}

Dim dim_over(const Dim& a, const Dim& b) {
  auto pa = as_product(a), pb = as_product(b);
  if (!pa || !pb || pb->coef == 0 || pa->coef % pb->coef != 0) return Dim::unknown();
  DimProduct p{pa->coef / pb->coef, {}};
  // Both lists are sorted: remove b's symbols from a's, one occurrence each.
  size_t j = 0;
  for (const std::string& s : pa->symbols) {
    if (j < pb->symbols.size() && pb->symbols[j] == s) ++j;
    else if (j < pb->symbols.size() && pb->symbols[j] < s) return Dim::unknown();  // b has a symbol a lacks
    else p.symbols.push_back(s);
  }
  if (j != pb->symbols.size()) return Dim::unknown();
  return to_dim(p);
}

}  // namespace ferry
