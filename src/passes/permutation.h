// passes/permutation.h — axis permutations, as Transpose uses them, for the layout passes.
//
// y = Transpose(x) {perm=P} means y.dims[i] = x.dims[P[i]]: axis i of y is axis
// P[i] of x. Written T_P below. Then
//   T_Q(T_P(x)) = T_R(x)    with R[j] = P[Q[j]]          (compose(P, Q))
//   T_P(T_Pinv(x)) = x      with Pinv[P[i]] = i          (invert(P))
// and an axis a of y is axis P[a] of x.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace ferry {

using Perm = std::vector<int64_t>;

/// [0, 1, ..., r-1] (also true for the empty perm of a scalar).
bool is_identity(const Perm& p);
/// Pinv with Pinv[P[i]] = i.
Perm invert(const Perm& p);
/// R with T_R = T_second after T_first: R[j] = first[second[j]].
Perm compose(const Perm& first, const Perm& second);
/// The perm of a Transpose node: its attribute, or reversed axes when omitted and
/// the input rank is known; nullopt when unknown or not a permutation.
std::optional<Perm> transpose_perm(const Node& t);

/// T_P(t): the constant's data transposed (any dtype). p.size() == t.rank().
Tensor permute_tensor(const Tensor& t, const Perm& p);
/// The same data with leading 1s prepended up to `rank` dims (numpy broadcasting alignment).
Tensor align_rank(const Tensor& t, int64_t rank);

/// For an op that removes the (y-space) axes `removed` of y = T_P(x) (Squeeze,
/// Reduce with keepdims=0): the Q with op(y) = T_Q(op'(x)), op' removing axes P[removed].
Perm perm_without_axes(const Perm& p, const std::vector<int64_t>& removed);
/// For Unsqueeze(T_P(x), axes): the Q with Unsqueeze(T_P(x), axes) = T_Q(Unsqueeze(x, axes)).
/// `axes` normalized to the output rank p.size() + axes.size().
Perm perm_with_inserted_axes(const Perm& p, const std::vector<int64_t>& axes);

/// True when y = T_P(x) keeps x's elements in memory order, i.e. it only moves
/// axes of size 1 (so it equals a Reshape): the axes of y not known to be 1
/// come from increasing axes of x. `y` is the transposed shape.
bool moves_only_unit_dims(const Perm& p, const Shape& y);
/// Every dim statically 1 (rank known).
bool all_unit_dims(const Shape& s);

}  // namespace ferry
