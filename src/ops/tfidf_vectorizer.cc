// ops/tfidf_vectorizer.cc — TfIdfVectorizer (ONNX opset 9): n-gram counts over token ids.
//
//   X [C] or [B, C] (int32 / int64 token ids) -> Y [O] or [B, O] (f32),
//   O = max(ngram_indexes) + 1
//
// The pool holds the n-grams: pool_int64s[ngram_counts[i] ..
// ngram_counts[i + 1]) are the (i + 1)-grams, back to back; the k-th n-gram of
// the whole pool counts into column ngram_indexes[k]. Only n-grams with
// min_gram_length <= n <= max_gram_length are looked for. Per row, for each
// skip distance d = 1 .. max_skip_count + 1 and each start position, the
// tokens start, start + d, start + 2d, ... are matched against the pool (a
// trie); every pool n-gram met on the way counts once. Unigrams are counted
// only at d = 1 (the ONNX reference's and onnxruntime's rule). Then
//   TF: the counts; IDF: weights[o] (or 1) where the count is > 0, else 0;
//   TFIDF: weights[o] * count (or the count).
// pool_strings (string tokens) is refused: ferry has no string tensors.
#include <algorithm>
#include <map>
#include <memory>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

/// A trie node: the pool n-gram ending here (1-based id; 0: none) and the next tokens.
struct NgramNode {
  int64_t id = 0;
  std::map<int64_t, std::unique_ptr<NgramNode>> next;
};

enum class TfIdfMode { kTf, kIdf, kTfIdf };

struct TfIdfPlan {
  NgramNode root;
  TfIdfMode mode = TfIdfMode::kTf;
  int64_t min_n = 1, max_n = 1, max_skip = 0, out_size = 0;
  std::vector<int64_t> columns;  ///< ngram id - 1 -> output column
  std::vector<double> weights;
};

Status tfidf_check_attrs(const NodeContext& ctx, const TfIdfVectorizerAttrs& a) {
  if (a.pool_strings) return ctx.unsupported_here("TfIdfVectorizer over string tokens (pool_strings): ferry has no string tensors");
  if (a.mode != "TF" && a.mode != "IDF" && a.mode != "TFIDF")
    return ctx.error("TfIdfVectorizer mode '" + a.mode + "' is not TF, IDF or TFIDF");
  if (a.min_gram_length < 1 || a.max_gram_length < a.min_gram_length)
    return ctx.error("TfIdfVectorizer needs 1 <= min_gram_length <= max_gram_length");
  if (a.max_skip_count < 0) return ctx.error("TfIdfVectorizer max_skip_count must be >= 0");
  if (a.ngram_indexes.empty()) return ctx.error("TfIdfVectorizer ngram_indexes must not be empty");
  for (int64_t c : a.ngram_indexes)
    if (c < 0 || c >= kMaxDim) return ctx.error("TfIdfVectorizer ngram_indexes must be >= 0, got " + std::to_string(c));
  if (a.weights && a.weights->size() < size_t(*std::max_element(a.ngram_indexes.begin(), a.ngram_indexes.end()) + 1))
    return ctx.error("TfIdfVectorizer weights has fewer entries than the output size");
  return Status::Ok();
}

/// Adds the `count` n-grams of length n starting at pool[begin] to the trie, ids from `id`.
void tfidf_add_ngrams(NgramNode& root, const std::vector<int64_t>& pool, size_t begin, int64_t count, int64_t n,
                      int64_t& id) {
  for (int64_t g = 0; g < count; ++g) {
    NgramNode* node = &root;
    for (int64_t k = 0; k < n; ++k) {
      std::unique_ptr<NgramNode>& child = node->next[pool[begin + size_t(g * n + k)]];
      if (!child) child = std::make_unique<NgramNode>();
      node = child.get();
    }
    node->id = id++;
  }
}

Result<std::unique_ptr<TfIdfPlan>> tfidf_plan(const NodeContext& ctx) {
  const TfIdfVectorizerAttrs& a = ctx.attrs<TfIdfVectorizerAttrs>();
  FERRY_TRY(tfidf_check_attrs(ctx, a));
  auto p = std::make_unique<TfIdfPlan>();
  p->mode = a.mode == "TF" ? TfIdfMode::kTf : a.mode == "IDF" ? TfIdfMode::kIdf : TfIdfMode::kTfIdf;
  p->min_n = a.min_gram_length, p->max_n = a.max_gram_length, p->max_skip = a.max_skip_count;
  p->columns = a.ngram_indexes;
  p->out_size = *std::max_element(p->columns.begin(), p->columns.end()) + 1;
  if (a.weights) p->weights = *a.weights;
  const std::vector<int64_t> pool = a.pool_int64s.value_or(std::vector<int64_t>{});
  const std::vector<int64_t>& counts = a.ngram_counts;
  int64_t id = 1;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : int64_t(pool.size()), n = int64_t(i) + 1;
    if (begin < 0 || end < begin || end > int64_t(pool.size()))
      return ctx.error("TfIdfVectorizer ngram_counts must rise within the pool of " + std::to_string(pool.size()));
    const int64_t count = (end - begin) / n;
    if (n >= p->min_n && n <= p->max_n) tfidf_add_ngrams(p->root, pool, size_t(begin), count, n, id);
    else id += count;
  }
  if (id - 1 > int64_t(p->columns.size()))
    return ctx.error("TfIdfVectorizer has " + std::to_string(id - 1) + " pool n-grams but " +
                     std::to_string(p->columns.size()) + " ngram_indexes");
  return p;
}

/// Counts one row of tokens into counts[0 .. out_size).
void tfidf_count_row(const TfIdfPlan& p, const std::vector<int64_t>& row, std::vector<int64_t>& counts) {
  const int64_t len = int64_t(row.size());
  int64_t start_n = p.min_n;
  for (int64_t d = 1; d <= p.max_skip + 1; ++d) {
    for (int64_t start = 0; start < len; ++start) {
      if (start + d * (start_n - 1) >= len) break;
      const NgramNode* node = &p.root;
      for (int64_t n = 1, at = start; n <= p.max_n && at < len && !node->next.empty(); ++n, at += d) {
        auto it = node->next.find(row[size_t(at)]);
        if (it == node->next.end()) break;
        node = it->second.get();
        if (n >= start_n && node->id != 0) ++counts[size_t(p.columns[size_t(node->id - 1)])];
      }
    }
    if (start_n == 1 && ++start_n > p.max_n) break;
  }
}

double tfidf_value(const TfIdfPlan& p, int64_t column, int64_t count) {
  const bool weighted = !p.weights.empty();
  const double w = weighted ? p.weights[size_t(column)] : 1.0;
  switch (p.mode) {
    case TfIdfMode::kTf: return double(count);
    case TfIdfMode::kIdf: return count > 0 ? w : 0.0;
    case TfIdfMode::kTfIdf: return w * double(count);
  }
  return 0;
}

Status tfidf_check_input(const NodeContext& ctx, DType t, const Shape& s) {
  if (t != DType::undefined && t != DType::i32 && t != DType::i64)
    return ctx.error(std::string("TfIdfVectorizer X must hold int32 or int64 token ids, got ") + dtype_name(t));
  if (s.rank_known() && s.rank() > 2) return ctx.error("TfIdfVectorizer X must be [C] or [B, C], got " + s.to_string());
  return Status::Ok();
}

}  // namespace

Status infer_TfIdfVectorizer(InferContext& ctx) {
  FERRY_TRY(tfidf_check_input(ctx, ctx.input_dtype(0), ctx.input_shape(0)));
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<TfIdfPlan> p, tfidf_plan(ctx));
  const Shape& x = ctx.input_shape(0);
  if (!x.rank_known()) ctx.set_output(0, DType::f32, Shape::unknown_rank());
  else if (x.rank() == 2) ctx.set_output(0, DType::f32, Shape({x[0], Dim(p->out_size)}));
  else ctx.set_output(0, DType::f32, Shape({Dim(p->out_size)}));
  return Status::Ok();
}

Status ref_TfIdfVectorizer(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_TRY(tfidf_check_input(ctx, x.dtype(), x.shape()));
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<TfIdfPlan> p, tfidf_plan(ctx));
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1, len = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
  std::vector<int64_t> dims = x.rank() == 2 ? std::vector<int64_t>{rows, p->out_size} : std::vector<int64_t>{p->out_size};
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::f32, dims));
  std::vector<int64_t> row(static_cast<size_t>(len)), counts(static_cast<size_t>(p->out_size));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < len; ++i) row[size_t(i)] = x.get_int(r * len + i);
    std::fill(counts.begin(), counts.end(), 0);
    tfidf_count_row(*p, row, counts);
    for (int64_t o = 0; o < p->out_size; ++o) y->set_double(r * p->out_size + o, tfidf_value(*p, o, counts[size_t(o)]));
  }
  return Status::Ok();
}

}  // namespace ferry
