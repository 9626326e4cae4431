// report/fusion_report.h — what the optimizer did, per pass and pattern.
//
// Built from PassStats (passes/rewriter.h): for each pass and pattern, how
// often it matched, applied and nearly matched, and for each near miss the
// reason and the source-model nodes involved (provenance). Two renderings:
// JSON for machines (`ferry convert --report R.json`) and a table for people.
//
//   {"passes": [{"name": "fold_constants", "matched": 12, "applied": 11, "near_misses": 1,
//                "patterns": [{"name": "constant_inputs", "matched": 12, "applied": 11,
//                              "near_misses": [{"reason": "...", "source_nodes": ["Reshape_3"]}]}]}]}
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "passes/rewriter.h"
#include "passes/target.h"

namespace ferry {

/// {"passes": [...]} as above; passes and patterns sorted by name.
nlohmann::ordered_json fusion_report_json(const PassStats& stats);

/// {"name": "cpu", "isa": "avx2", "ops": [...], "conv_epilogues": [...], "matmul_epilogues": [...],
///  "mul_epilogues": [...], "dtypes": [...], "layout": "blocked", "conv_pad_limit": 3}: the target the graph was optimized for.
nlohmann::ordered_json target_json(const Target& t);

struct ReportTableOptions {
  /// Near misses listed per pattern (grouped by reason); the rest are counted. -1: all.
  int max_near_misses = 5;
  /// Leave out patterns that never matched.
  bool hide_unmatched = true;
};

/// A fixed-width table: pass, pattern, matched, applied, near misses; then the near misses.
std::string fusion_report_table(const PassStats& stats, const ReportTableOptions& options = {});

}  // namespace ferry
