// ir/dim_product.h — symbolic dims as products: "197*batch" is 197 times batch.
//
// Merging a symbolic dim with others (Reshape [S, B, H, D] -> [S*B, H*D], Flatten,
// a shape vector built with Mul) gives a dim that no single symbol names. Such a
// product is kept as a symbol whose name is its canonical product: the static
// coefficient first (left out when 1), then the symbols in sorted order, joined
// by '*'. Two products of the same factors get the same name, so Dim::same_as
// compares them, and splitting one again (Reshape [S*B, E] -> [S, -1, E])
// divides the factors back out exactly: the batch symbol survives a round trip.
// Symbol names from models that already read as such a product ("2*s0", as
// torch.export's exporter writes derived dims) are products in the same sense.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/shape.h"

namespace ferry {

/// coef * symbols[0] * symbols[1] * ...; symbols sorted, coef > 0 or the product is 0.
struct DimProduct {
  int64_t coef = 1;
  std::vector<std::string> symbols;
};

/// A static or symbolic dim as a product; nullopt for an unknown dim.
std::optional<DimProduct> as_product(const Dim& d);

/// The dim of a product: static when it has no symbols, else the canonical symbol.
Dim to_dim(const DimProduct& p);

/// a * b; unknown when either is unknown or the coefficient would exceed kMaxDim.
Dim dim_times(const Dim& a, const Dim& b);

/// a / b when b divides a exactly (coefficient and every symbol), else unknown.
Dim dim_over(const Dim& a, const Dim& b);

}  // namespace ferry
