// Runs every case of tests/passes/ir/*.ir (format: ir_check.h): parse, the RUN line's
// passes through run_passes (what `ferry opt --passes` runs), verify, optimized ==
// unoptimized on random inputs, then the case's CHECK / OUTPUT / STATS directives.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "ir_check.h"
#include "pass_test_util.h"
#include "passes/pipeline.h"

namespace ferry::testing {
namespace {

std::vector<IrCase> all_cases() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FERRY_SOURCE_DIR) + "/tests/passes/ir"))
    if (e.path().extension() == ".ir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<IrCase> cases;
  for (const auto& f : files)
    for (IrCase& c : read_ir_cases(f.string())) cases.push_back(std::move(c));
  return cases;
}

class IrPassTest : public ::testing::TestWithParam<IrCase> {};

TEST_P(IrPassTest, OutputMatches) {
  const IrCase& c = GetParam();
  SCOPED_TRACE(c.file + ":" + std::to_string(c.line));
  ASSERT_FALSE(c.passes.empty()) << "no RUN: --passes line";
  std::unique_ptr<Graph> before = parse_ir(c.text), after = parse_ir(c.text);
  OptimizeOptions options;
  options.verify_each_pass = true;
  PassStats stats;
  Status st = run_passes(*after, c.passes, reference_target(), options, &stats);
  ASSERT_TRUE(st.ok()) << st.to_string();
  expect_same_outputs(*before, *after, c.rtol);
  const std::string failures = check_ir(c, ir(*after), stats);
  EXPECT_TRUE(failures.empty()) << failures;
}

std::string case_name(const ::testing::TestParamInfo<IrCase>& info) {
  std::string stem = std::filesystem::path(info.param.file).stem().string();
  return stem + "_line" + std::to_string(info.param.line);
}

INSTANTIATE_TEST_SUITE_P(Ir, IrPassTest, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace ferry::testing
