// ops/non_max_suppression.cc — NonMaxSuppression (ONNX opset 11).
//
//   boxes [B, S, 4], scores [B, K, S], max_output_boxes_per_class?, iou_threshold?, score_threshold?
//     -> selected_indices i64 [count, 3], rows (batch, class, box)
//
// Per batch and class, greedily: take the highest-scoring remaining box (equal
// scores: the lower box index first), keep it unless its IoU with a box already
// kept for this class is > iou_threshold, until max_output_boxes_per_class
// boxes are kept. With a score_threshold, only boxes scoring > it take part.
// Omitted inputs: max_output_boxes_per_class = 0 (select nothing),
// iou_threshold = 0, no score threshold. Boxes are (y1, x1, y2, x2) with the
// corners in either order (center_point_box=0) or (x_center, y_center, width,
// height) (center_point_box=1). A box of zero area, or two boxes that do not
// overlap, never suppress; a NaN score ranks below every number. This is the ONNX reference's algorithm; the count
// depends on the data, so inference leaves it unknown unless every input is
// known.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

struct Box {
  double y_min, x_min, y_max, x_max;
};

Box box_at(const Tensor& boxes, int64_t i, bool center) {
  const double a = boxes.get_double(4 * i), b = boxes.get_double(4 * i + 1);
  const double c = boxes.get_double(4 * i + 2), d = boxes.get_double(4 * i + 3);
  if (center) return {b - d / 2, a - c / 2, b + d / 2, a + c / 2};
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

/// IoU(p, q) > threshold, with the reference's rules for empty overlaps and degenerate boxes.
bool suppresses(const Box& p, const Box& q, double threshold) {
  const double x0 = std::max(p.x_min, q.x_min), x1 = std::min(p.x_max, q.x_max);
  if (x1 <= x0) return false;
  const double y0 = std::max(p.y_min, q.y_min), y1 = std::min(p.y_max, q.y_max);
  if (y1 <= y0) return false;
  const double inter = (x1 - x0) * (y1 - y0);
  const double area_p = (p.x_max - p.x_min) * (p.y_max - p.y_min);
  const double area_q = (q.x_max - q.x_min) * (q.y_max - q.y_min);
  const double uni = area_p + area_q - inter;
  if (inter <= 0 || area_p <= 0 || area_q <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

/// The one value of an optional scalar-like input.
Result<std::optional<double>> optional_scalar(const NodeContext& ctx, const Tensor* t, const char* what) {
  if (!t) return std::optional<double>();
  if (t->numel() == 0) return std::optional<double>();  // the reference reads an empty tensor as omitted
  if (t->numel() != 1) return ctx.error(std::string("NonMaxSuppression ") + what + " must have one element, got " + t->type_string());
  return std::optional<double>(t->get_double(0));
}

Status check_shapes(const NodeContext& ctx, const Shape& boxes, const Shape& scores) {
  if (boxes.rank_known() && (boxes.rank() != 3 || (boxes[2].is_static() && boxes[2].value() != 4)))
    return ctx.error("NonMaxSuppression boxes must be [batches, boxes, 4], got " + boxes.to_string());
  if (scores.rank_known() && scores.rank() != 3)
    return ctx.error("NonMaxSuppression scores must be [batches, classes, boxes], got " + scores.to_string());
  if (boxes.rank_known() && scores.rank_known())
    for (auto [b, s] : {std::pair{0, 0}, std::pair{1, 2}})
      if (boxes[size_t(b)].is_static() && scores[size_t(s)].is_static() &&
          boxes[size_t(b)].value() != scores[size_t(s)].value())
        return ctx.error("NonMaxSuppression boxes " + boxes.to_string() + " and scores " + scores.to_string() +
                         " disagree on the number of " + (b == 0 ? "batches" : "boxes"));
  return Status::Ok();
}

Status check_types(const NodeContext& ctx, const std::vector<DType>& t) {
  if (!is_floating(t[0]) || !is_floating(t[1]))
    return ctx.error("NonMaxSuppression boxes and scores must be floating point");
  if (t.size() > 2 && t[2] != DType::undefined && t[2] != DType::i64)
    return ctx.error(std::string("NonMaxSuppression max_output_boxes_per_class must be i64, got ") + dtype_name(t[2]));
  for (size_t i = 3; i < t.size(); ++i)
    if (t[i] != DType::undefined && !is_floating(t[i]))
      return ctx.error(std::string("NonMaxSuppression thresholds must be floating point, got ") + dtype_name(t[i]));
  return Status::Ok();
}

/// Runs the selection; inputs 2..4 may be null (omitted).
Result<std::vector<int64_t>> select(const NodeContext& ctx, const Tensor& boxes, const Tensor& scores,
                                    const Tensor* max_out, const Tensor* iou, const Tensor* score_thr) {
  FERRY_TRY(check_shapes(ctx, boxes.shape(), scores.shape()));
  FERRY_ASSIGN_OR_RETURN(auto max_v, optional_scalar(ctx, max_out, "max_output_boxes_per_class"));
  FERRY_ASSIGN_OR_RETURN(auto iou_v, optional_scalar(ctx, iou, "iou_threshold"));
  FERRY_ASSIGN_OR_RETURN(auto score_v, optional_scalar(ctx, score_thr, "score_threshold"));
  const int64_t limit = max_v ? std::max<int64_t>(max_out->get_int(0), 0) : 0;
  const double iou_threshold = iou_v.value_or(0.0);
  const bool center = ctx.attrs<NonMaxSuppressionAttrs>().center_point_box != 0;
  const int64_t batches = boxes.dim(0), num_boxes = boxes.dim(1), classes = scores.dim(1);

  std::vector<int64_t> rows;  // (batch, class, box) triples
  std::vector<int64_t> order;
  std::vector<double> key;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes && limit > 0; ++c) {
      const int64_t s0 = (b * classes + c) * num_boxes;
      order.clear();
      key.resize(size_t(num_boxes));
      for (int64_t i = 0; i < num_boxes; ++i) {
        const double v = scores.get_double(s0 + i);
        key[size_t(i)] = std::isnan(v) ? -std::numeric_limits<double>::infinity() : v;  // NaN ranks last
        if (!score_v || v > *score_v) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return key[size_t(p)] > key[size_t(q)]; });
      kept.clear();
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= limit) break;
        const Box box = box_at(boxes, b * num_boxes + i, center);
        bool keep = true;
        for (const Box& k : kept) keep = keep && !suppresses(box, k, iou_threshold);
        if (!keep) continue;
        kept.push_back(box);
        rows.insert(rows.end(), {b, c, i});
      }
    }
  return rows;
}

const Tensor* optional_input(const KernelContext& ctx, size_t i) {
  return ctx.has_input(i) ? &ctx.input(i) : nullptr;
}

}  // namespace

Status infer_NonMaxSuppression(InferContext& ctx) {
  std::vector<DType> types;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) types.push_back(ctx.has_input(i) ? ctx.input_dtype(i) : DType::undefined);
  FERRY_TRY(check_types(ctx, types));
  FERRY_TRY(check_shapes(ctx, ctx.input_shape(0), ctx.input_shape(1)));
  Dim count;
  bool known = ctx.input_value(0) && ctx.input_value(1);
  for (size_t i = 2; i < ctx.num_inputs(); ++i) known = known && (!ctx.has_input(i) || ctx.input_value(i));
  if (known) {
    auto in = [&](size_t i) { return i < ctx.num_inputs() ? ctx.input_value(i) : nullptr; };
    FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> rows, select(ctx, *in(0), *in(1), in(2), in(3), in(4)));
    count = Dim(int64_t(rows.size() / 3));
  }
  ctx.set_output(0, DType::i64, Shape(std::vector<Dim>{count, Dim(3)}));
  return Status::Ok();
}

Status ref_NonMaxSuppression(KernelContext& ctx) {
  std::vector<DType> types;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) types.push_back(ctx.has_input(i) ? ctx.input(i).dtype() : DType::undefined);
  FERRY_TRY(check_types(ctx, types));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> rows,
                         select(ctx, ctx.input(0), ctx.input(1), optional_input(ctx, 2), optional_input(ctx, 3),
                                optional_input(ctx, 4)));
  FERRY_ASSIGN_OR_RETURN(Tensor * out, movement_output(ctx, 0, DType::i64, {int64_t(rows.size() / 3), 3}));
  std::copy(rows.begin(), rows.end(), out->data<int64_t>());
  return Status::Ok();
}

}  // namespace ferry
