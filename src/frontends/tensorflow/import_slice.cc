// StridedSlice (every mask) and Slice.
//
// StridedSlice's begin/end/strides form a sparse spec; expanding it against
// the input rank gives, per input dim, a Slice range (or the whole dim), a
// shrink (index: slice of 1, then Squeeze) — and new axes (Unsqueeze at their
// output positions):
//   y = Unsqueeze(Squeeze(Slice(x, starts, ends, axes, steps), shrink_dims), new_axes)
// An ellipsis (or the implicit one at the end) covers the input dims the spec
// does not name. Masked begin/end become +-infinity, which Slice clamps.
#include <limits>

#include "frontends/tensorflow/import_table.h"

namespace ferry::tf_import {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

}  // namespace

Status import_StridedSlice(TfNode& n) {
  FERRY_TRY(n.expect_inputs(4, 4));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> begin, n.const_ints(1, "begin"));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> end, n.const_ints(2, "end"));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> strides, n.const_ints(3, "strides"));
  if (begin.size() != end.size() || begin.size() != strides.size())
    return invalid_model("begin, end and strides have " + std::to_string(begin.size()) + ", " +
                         std::to_string(end.size()) + " and " + std::to_string(strides.size()) + " values");
  const int64_t begin_mask = n.int_or("begin_mask", 0), end_mask = n.int_or("end_mask", 0);
  const int64_t ellipsis_mask = n.int_or("ellipsis_mask", 0), new_axis_mask = n.int_or("new_axis_mask", 0);
  const int64_t shrink_mask = n.int_or("shrink_axis_mask", 0);
  std::optional<int64_t> rank = n.rank(0);
  if (!rank) {
    const Node* p = n.input(0)->producer();
    return n.unsupported("the input's rank must be known at import" +
                         (p ? " (input 0 comes from " + p->describe() + ", whose shape is not inferred)" : std::string()));
  }
  const int64_t r = *rank, k = int64_t(begin.size());
  if (k > 62) return invalid_model("slice spec has " + std::to_string(k) + " entries");
  auto bit = [](int64_t mask, int64_t i) { return (mask >> i) & 1; };
  int ellipses = 0;
  int64_t consuming = 0;  // spec entries that take an input dim (not ellipsis, not new axis)
  for (int64_t i = 0; i < k; ++i) {
    if (bit(ellipsis_mask, i)) ++ellipses;
    else if (!bit(new_axis_mask, i)) ++consuming;
  }
  if (ellipses > 1) return invalid_model("ellipsis_mask has more than one bit set");
  if (consuming > r)
    return invalid_model("the slice spec indexes " + std::to_string(consuming) + " dims of a rank-" + std::to_string(r) + " input");
  std::vector<int64_t> starts, ends, axes, steps, shrink, new_axes;
  int64_t dim = 0, out = 0;  // next input dim, next output position (after shrinking)
  auto take = [&](int64_t i) -> Status {
    int64_t s = strides[size_t(i)];
    if (s == 0) return invalid_model("strides[" + std::to_string(i) + "] is 0");
    if (bit(shrink_mask, i)) {
      int64_t b = begin[size_t(i)];
      starts.push_back(b);
      ends.push_back(b == -1 ? kMax : b + 1);
      steps.push_back(1);
      axes.push_back(dim);
      shrink.push_back(dim);
    } else {
      bool full = bit(begin_mask, i) && bit(end_mask, i) && s == 1;
      if (!full) {
        starts.push_back(bit(begin_mask, i) ? (s > 0 ? 0 : kMax) : begin[size_t(i)]);
        ends.push_back(bit(end_mask, i) ? (s > 0 ? kMax : kMin) : end[size_t(i)]);
        steps.push_back(s);
        axes.push_back(dim);
      }
      ++out;
    }
    ++dim;
    return Status::Ok();
  };
  for (int64_t i = 0; i < k; ++i) {
    if (bit(ellipsis_mask, i)) {
      int64_t covered = r - consuming;
      dim += covered;
      out += covered;
    } else if (bit(new_axis_mask, i)) {
      new_axes.push_back(out++);
    } else {
      FERRY_TRY(take(i));
    }
  }
  Value* y = n.input(0);
  if (!axes.empty())
    y = n.helper1(Op::Slice, {y, n.const_i64(starts, "starts"), n.const_i64(ends, "ends"), n.const_i64(axes, "axes"),
                              n.const_i64(steps, "steps")});
  if (!shrink.empty()) y = n.helper1(Op::Squeeze, {y, n.const_i64(shrink, "shrink_axes")});
  if (!new_axes.empty()) y = n.helper1(Op::Unsqueeze, {y, n.const_i64(new_axes, "new_axes")});
  if (y == n.input(0)) y = n.emit1(Op::Identity, {y});
  n.set_output(0, y);
  return Status::Ok();
}

Status import_Slice(TfNode& n) {
  FERRY_TRY(n.expect_inputs(3, 3));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> begin, n.const_ints(1, "begin"));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> size, n.const_ints(2, "size"));
  if (begin.size() != size.size())
    return invalid_model("begin has " + std::to_string(begin.size()) + " values, size " + std::to_string(size.size()));
  std::vector<int64_t> ends, axes;
  for (size_t i = 0; i < begin.size(); ++i) {
    if (begin[i] < 0 || size[i] < -1) return invalid_model("begin must be >= 0 and size >= -1");
    ends.push_back(size[i] == -1 ? kMax : begin[i] + size[i]);
    axes.push_back(int64_t(i));
  }
  n.set_output(0, n.emit1(Op::Slice, {n.input(0), n.const_i64(begin, "starts"), n.const_i64(ends, "ends"),
                                      n.const_i64(axes, "axes")}));
  return Status::Ok();
}

}  // namespace ferry::tf_import
