#include "frontends/onnx/import_table.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace ferry::onnx_import {
namespace {

TEST(OnnxImportTable, SortedAndUnique) {
  auto rows = import_rows();
  ASSERT_GT(rows.size(), 100u);
  for (size_t i = 1; i < rows.size(); ++i)
    EXPECT_LT(std::string(rows[i - 1].op_type), std::string(rows[i].op_type)) << "row " << i;
  for (const ImportRow& r : rows) {
    EXPECT_EQ(find_import(r.op_type), &r) << r.op_type;
    EXPECT_GE(r.since, 1) << r.op_type;
    if (!r.fn) {
      EXPECT_EQ(op_name(r.direct), std::string(r.op_type)) << "a DIRECT row imports as the op of its name";
    }
  }
  EXPECT_EQ(find_import("NoSuchOp"), nullptr);
  EXPECT_EQ(find_import(""), nullptr);
  EXPECT_EQ(find_import("Zzz"), nullptr);
}

/// docs/ferry_ops.md, which has a "### Name" section per ferry-domain op.
std::string ferry_ops_doc() {
  std::ifstream f(std::string(FERRY_SOURCE_DIR) + "/docs/ferry_ops.md");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(OnnxImportTable, EveryIrOpHasAnImporter) {
  // Every IR op is named after the ONNX op it takes its semantics from, or is
  // one of ferry's own (fused) ops, written in domain "ferry" and documented.
  const std::string doc = ferry_ops_doc();
  ASSERT_FALSE(doc.empty()) << "cannot read docs/ferry_ops.md";
  for (Op op : all_ops())
    if (find_import(op_name(op)) == nullptr) {
      EXPECT_NE(doc.find("\n### " + std::string(op_name(op)) + "\n"), std::string::npos)
          << op_name(op) << " has no ONNX importer and no section in docs/ferry_ops.md";
    }
  // Renamed or retired ONNX ops that map onto IR ops.
  EXPECT_NE(find_import("Upsample"), nullptr);
  EXPECT_NE(find_import("Scatter"), nullptr);
}

TEST(OnnxImportTable, RepairHints) {
  EXPECT_NE(repair_hint("com.microsoft", "FusedConv").find("ONNX Runtime contrib op"), std::string::npos);
  EXPECT_NE(repair_hint("my.domain", "Thing").find("custom-domain op"), std::string::npos);
  EXPECT_EQ(repair_hint("", "SomethingUnknown"), "");
}

}  // namespace
}  // namespace ferry::onnx_import
