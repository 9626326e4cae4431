// Tests for ops/tfidf_vectorizer.cc, worked by hand.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

/// Pool: unigrams 1 and 3, bigram (1, 2); columns 0, 1, 2.
AttrMap tfidf_attrs(const char* mode, int64_t skip, std::optional<std::vector<double>> weights = std::nullopt) {
  AttrMap a = attrs({{"mode", std::string(mode)},
                     {"min_gram_length", int64_t(1)},
                     {"max_gram_length", int64_t(2)},
                     {"max_skip_count", skip},
                     {"ngram_counts", std::vector<int64_t>{0, 2}},
                     {"ngram_indexes", std::vector<int64_t>{0, 1, 2}},
                     {"pool_int64s", std::vector<int64_t>{1, 3, 1, 2}}});
  if (weights) a.set("weights", *weights);
  return a;
}

TEST(TfIdfVectorizer, ModesByHand) {
  const Tensor tokens = i64({5}, {1, 2, 1, 2, 3});
  auto out = run_op(Op::TfIdfVectorizer, {tokens}, tfidf_attrs("TF", 0));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {3});
  expect_near((*out)[0], {2, 1, 2});  // 1 twice, 3 once, (1, 2) twice
  out = run_op(Op::TfIdfVectorizer, {tokens}, tfidf_attrs("IDF", 0));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 1, 1});
  out = run_op(Op::TfIdfVectorizer, {tokens}, tfidf_attrs("TFIDF", 0, std::vector<double>{0.5, 1, 2}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 1, 4});
  // Skip 1 also matches bigrams at distance 2; unigrams are counted at distance 1 only.
  out = run_op(Op::TfIdfVectorizer, {i64({2, 3}, {1, 9, 2, 1, 2, 1})}, tfidf_attrs("TF", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3});
  expect_near((*out)[0], {1, 0, 1, 2, 0, 1});  // row 0: (1, _, 2) at distance 2; row 1 [1, 2, 1]: 1 twice, (1, 2) once
}

TEST(TfIdfVectorizer, Errors) {
  AttrMap strings = tfidf_attrs("TF", 0);
  strings.set("pool_strings", std::vector<std::string>{"a", "b"});
  expect_error(run_op(Op::TfIdfVectorizer, {i64({2}, {1, 2})}, strings), "ferry has no string tensors");
  expect_error(run_op(Op::TfIdfVectorizer, {i64({2}, {1, 2})}, tfidf_attrs("BM25", 0)), "mode 'BM25' is not TF");
  expect_error(run_op(Op::TfIdfVectorizer, {f32({2}, {1, 2})}, tfidf_attrs("TF", 0)), "must hold int32 or int64 token ids");
}

}  // namespace
}  // namespace ferry
