// Accuracy budgets (precision/accuracy_budget.h): the text form, its errors, the metrics
// and the score the guard ranks nodes by.
#include "precision/accuracy_budget.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ferry {
namespace {

TEST(AccuracyBudget, ParsesTerms) {
  auto b = parse_accuracy_budget("cosine>=0.999,max_rel<=1e-2,top1>=0.99,max_abs<=0.5");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(*b->min_cosine, 0.999);
  EXPECT_EQ(*b->max_rel, 1e-2);
  EXPECT_EQ(*b->min_top1, 0.99);
  EXPECT_EQ(*b->max_abs, 0.5);
  EXPECT_EQ(b->text(), "cosine>=0.999,max_rel<=0.01,max_abs<=0.5,top1>=0.99");
  EXPECT_EQ(default_accuracy_budget(DType::f16).text(), "cosine>=0.999,max_rel<=0.01");
  EXPECT_EQ(default_accuracy_budget(DType::bf16).text(), "cosine>=0.999");
}

TEST(AccuracyBudget, BadTermsNameTheTerm) {
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"", "is empty"},
           {"cosine=0.9", "term 'cosine=0.9' is not NAME>=V or NAME<=V"},
           {"cosine>=abc", "term 'cosine>=abc' has no number"},
           {"cosine<=0.9", "needs >="},
           {"max_rel>=0.1", "needs <="},
           {"psnr>=30", "names no metric"},
           {"cosine>=2", "within [-1, 1]"},
           {"max_abs<=-1", "must be >= 0"}}) {
    auto b = parse_accuracy_budget(text);
    ASSERT_FALSE(b.ok()) << text;
    EXPECT_NE(b.status().message().find(want), std::string::npos) << b.status().message();
  }
}

TEST(AccuracyBudget, MetricsAndScore) {
  const Tensor ref = Tensor::from_vector(std::vector<float>{1, 2, 3, 1e-6f});
  const Tensor got = Tensor::from_vector(std::vector<float>{1, 2, 3.03f, 0});
  AccuracyMetrics m;
  accumulate_metrics(got, ref, m);
  EXPECT_NEAR(m.max_abs, 0.03, 1e-6);
  EXPECT_NEAR(m.max_rel, 0.01, 1e-6) << "the 1e-6 element is judged against 1e-3 * max|r|";
  AccuracyBudget b;
  b.max_rel = 0.02;
  judge(b, m);
  EXPECT_TRUE(m.holds);
  EXPECT_NEAR(m.score, 0.5, 1e-4);

  AccuracyMetrics inf;
  accumulate_metrics(Tensor::from_vector(std::vector<float>{INFINITY}), Tensor::from_vector(std::vector<float>{1}), inf);
  judge(b, inf);
  EXPECT_FALSE(inf.holds);
  EXPECT_TRUE(std::isinf(inf.score));
  EXPECT_NE(inf.text().find("NaN/Inf"), std::string::npos);
}

TEST(AccuracyBudget, EachTermWithItsValue) {
  auto b = parse_accuracy_budget("cosine>=0.9999999,max_rel<=0.01,top1>=0.5");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->text(), "cosine>=0.9999999,max_rel<=0.01,top1>=0.5") << "a bound near 1 keeps its digits";
  AccuracyMetrics m;
  m.cosine = 0.9999996;
  m.max_rel = 0.02;
  const std::vector<BudgetTermResult> terms = judge_terms(*b, m);
  ASSERT_EQ(terms.size(), 3u);
  EXPECT_EQ(terms[0].term(), "cosine>=0.9999999");
  EXPECT_EQ(terms[0].text(), "cosine 0.9999996 (needs >= 0.9999999)");
  EXPECT_NEAR(terms[0].ratio, 4, 1e-6);
  EXPECT_FALSE(terms[0].holds());
  EXPECT_EQ(terms[1].value_text(), "max_rel 0.02");
  EXPECT_NEAR(terms[1].ratio, 2, 1e-9);
  EXPECT_FALSE(terms[2].value.has_value()) << "no classifier output: top1 not measured";
  EXPECT_TRUE(terms[2].holds());
  judge(*b, m);
  EXPECT_NEAR(m.score, 4, 1e-6) << "the score is the largest term's ratio";
  EXPECT_FALSE(m.holds);
}

}  // namespace
}  // namespace ferry
