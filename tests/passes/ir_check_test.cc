// The .ir checker itself (ir_check.h): each directive passes on output that has what
// it asks for and fails, naming the directive's line, on output that does not.
#include "ir_check.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace ferry::testing {
namespace {

/// A scratch file of this test's own: ctest runs the tests of this file in parallel processes.
std::string scratch_path(const char* what) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return (std::filesystem::temp_directory_path() /
          ("ferry_" + std::string(what) + "_" + test + "_" + std::to_string(::getpid()) + ".ir"))
      .string();
}

/// The single case of an .ir file with this body (after a RUN header).
IrCase one_case(const std::string& body) {
  const std::string path = scratch_path("ir_check_test");
  std::ofstream(path) << "// RUN: --passes p\n// -----\n" << body;
  std::vector<IrCase> cases = read_ir_cases(path);
  std::remove(path.c_str());
  EXPECT_EQ(cases.size(), 1u);
  return cases.empty() ? IrCase{} : cases[0];
}

const std::string kOut = "graph g (%x: f32[2]) -> (%y) {\n  %a = Relu(%x) : f32[2] @a\n  %y = Neg(%a) : f32[2] @y\n}\n";

TEST(IrCheck, CheckNextSameAndNotInOrder) {
  IrCase c = one_case("// CHECK: Relu(%x)\n// CHECK-SAME: f32[2]\n// CHECK-NEXT: %y = Neg(%a)\n// CHECK-NOT: Identity\n");
  EXPECT_EQ(c.passes, std::vector<std::string>{"p"});
  EXPECT_EQ(check_ir(c, kOut, {}), "");
}

TEST(IrCheck, FailuresNameTheDirectiveLine) {
  // Neg comes after Relu, so a CHECK for Relu after Neg fails; CHECK-NOT finds Relu before Neg.
  IrCase order = one_case("// CHECK: Neg(\n// CHECK: Relu(\n");
  EXPECT_NE(check_ir(order, kOut, {}).find(":4: CHECK: Relu("), std::string::npos);
  IrCase not_ = one_case("// CHECK-NOT: Relu\n// CHECK: Neg\n");
  EXPECT_NE(check_ir(not_, kOut, {}).find("CHECK-NOT: Relu"), std::string::npos);
  IrCase next = one_case("// CHECK: graph g\n// CHECK-NEXT: Neg\n");
  EXPECT_NE(check_ir(next, kOut, {}).find("not on the line after"), std::string::npos);
}

TEST(IrCheck, CountAndWholeOutput) {
  EXPECT_EQ(check_ir(one_case("// CHECK-COUNT-2: f32[2] @\n"), kOut, {}), "");
  EXPECT_NE(check_ir(one_case("// CHECK-COUNT-1: f32[2] @\n"), kOut, {}).find("on 2 lines, want 1"), std::string::npos);
  IrCase whole = one_case("// OUTPUT:\n// graph g (%x: f32[2]) -> (%y) {\n//   %a = Relu(%x) : f32[2] @a\n"
                          "//   %y = Neg(%a) : f32[2] @y\n// }\n");
  EXPECT_EQ(check_ir(whole, kOut, {}), "");
  EXPECT_NE(check_ir(whole, kOut + "\n", {}).find("OUTPUT differs"), std::string::npos);
}

TEST(IrCheck, StatsAndNearMisses) {
  PassStats stats;
  stats["p"]["pat"].matched = 2;
  stats["p"]["pat"].applied = 1;
  stats["p"]["pat"].near_misses.push_back({"mean is not a constant", {"bn"}});
  EXPECT_EQ(check_ir(one_case("// STATS: pat matched=2 applied=1 near_misses=1\n"), kOut, stats), "");
  EXPECT_EQ(check_ir(one_case("// STATS: p.pat applied=1\n"), kOut, stats), "");
  EXPECT_NE(check_ir(one_case("// STATS: pat applied=2\n"), kOut, stats).find("applied is 1, want applied=2"),
            std::string::npos);
  EXPECT_EQ(check_ir(one_case("// NEAR-MISS: pat: not a constant\n"), kOut, stats), "");
  EXPECT_EQ(check_ir(one_case("// NEAR-MISS: pat: not a constant <- bn\n"), kOut, stats), "");
  EXPECT_NE(check_ir(one_case("// NEAR-MISS: pat: not a constant <- other\n"), kOut, stats), "");
  EXPECT_NE(check_ir(one_case("// NEAR-MISS: pat: other reason\n"), kOut, stats).find("no near miss"),
            std::string::npos);
}

TEST(IrCheck, CasesTakeTheHeaderRunLineUnlessTheyHaveTheirOwn) {
  const std::string path = scratch_path("ir_check_run");
  std::ofstream(path) << "// RUN: --passes a, b\n// -----\n// RTOL: 1e-3\n// -----\n// RUN: --passes c\n";
  std::vector<IrCase> cases = read_ir_cases(path);
  std::remove(path.c_str());
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].passes, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(cases[0].rtol, 1e-3);
  EXPECT_EQ(cases[1].passes, std::vector<std::string>{"c"});
  EXPECT_EQ(cases[1].line, 5);
}

}  // namespace
}  // namespace ferry::testing
