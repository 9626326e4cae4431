#include "report/fusion_report.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

PassStats sample() {
  PassStats s;
  PatternStats& fold = s["fold_constants"]["constant_inputs"];
  fold.applied = 3;
  fold.matched = 4;
  fold.near_misses.push_back({"cannot evaluate: output would be 4000 bytes", {"zeros"}});
  PatternStats& bn = s["canonicalize_batchnorm"]["batchnorm_to_mul_add"];
  bn.matched = 3;
  bn.near_misses.push_back({"mean is not a constant", {"bn1"}});
  bn.near_misses.push_back({"mean is not a constant", {"bn2", "bn2/helper"}});
  bn.near_misses.push_back({"training_mode=1", {"bn3"}});
  s["canonicalize_gemm"]["gemm_to_matmul_add"];  // never matched
  return s;
}

TEST(FusionReport, JsonListsPassesPatternsAndNearMisses) {
  auto j = fusion_report_json(sample());
  ASSERT_EQ(j["passes"].size(), 3u);
  const auto& bn = j["passes"][0];  // sorted by name
  EXPECT_EQ(bn["name"], "canonicalize_batchnorm");
  EXPECT_EQ(bn["matched"], 3);
  EXPECT_EQ(bn["applied"], 0);
  EXPECT_EQ(bn["near_misses"], 3);
  const auto& p = bn["patterns"][0];
  EXPECT_EQ(p["name"], "batchnorm_to_mul_add");
  ASSERT_EQ(p["near_misses"].size(), 3u);
  EXPECT_EQ(p["near_misses"][1]["reason"], "mean is not a constant");
  EXPECT_EQ(p["near_misses"][1]["source_nodes"], nlohmann::ordered_json({"bn2", "bn2/helper"}));
  EXPECT_EQ(j["passes"][2]["patterns"][0]["applied"], 3);
}

TEST(FusionReport, TableShowsCountsAndGroupsNearMissesByReason) {
  std::string t = fusion_report_table(sample());
  EXPECT_EQ(t,
            "pass                    pattern                matched   applied  near misses\n"
            "canonicalize_batchnorm  batchnorm_to_mul_add         3         0            3\n"
            "fold_constants          constant_inputs              4         3            1\n"
            "\n"
            "near misses\n"
            "  canonicalize_batchnorm / batchnorm_to_mul_add\n"
            "    2x  mean is not a constant\n"
            "      at: bn1; bn2, bn2/helper\n"
            "    1x  training_mode=1\n"
            "      at: bn3\n"
            "  fold_constants / constant_inputs\n"
            "    1x  cannot evaluate: output would be 4000 bytes\n"
            "      at: zeros\n");
}

TEST(FusionReport, TableLimitsReasonsAndCanShowUnmatchedPatterns) {
  ReportTableOptions o;
  o.max_near_misses = 1;
  o.hide_unmatched = false;
  std::string t = fusion_report_table(sample(), o);
  EXPECT_NE(t.find("canonicalize_gemm       gemm_to_matmul_add           0"), std::string::npos) << t;
  EXPECT_NE(t.find("    ... and 1 more reasons\n"), std::string::npos) << t;
  EXPECT_EQ(fusion_report_table({}), "no pattern matched\n");
}

}  // namespace
}  // namespace ferry
