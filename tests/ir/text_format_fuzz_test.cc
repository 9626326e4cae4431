// Bounded, deterministic fuzzing of the text IR parser (ferry_textir_fuzz style):
// truncations, random bytes and random mutations of a valid text must never
// crash; every failure must name a line and column; and whatever parses must
// print to a text that parses back and prints identically (print is a fixpoint).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "ir/text_format.h"

namespace ferry {
namespace {

const char* const kSeed = R"(// a graph exercising every construct of the format
graph "fuzz seed" (%x: f32[N,2,"s q",?], %idx: i64[*], %u, %h: ?[3]) -> (%y, %"z z", %k:0) {
  %w = const f32[2,1,1,1] [0.1, -2.5]
  %b = const f16[2] [1, -inf]
  %bf = const bf16[2] [nan, 0.100097656]
  %i = const i8[3] [-128, 127, 0]
  %q = const u64[1] [18446744073709551615]
  %t = const bool[2] [true, false]
  %d = const f64[] [0.3333333333333333]
  %s = const i64[1] [2]
  %z0 = const f32[2,2] splat(0.5)
  %y = Relu(%a) : f32[N,1,"s q",?] @relu <- ["relu", "act/1"]
  %c = Conv(%x, %w, _) {auto_pad="NOTSET", dilations=[1,1], group=1, pads=[0,0,0,0]} : f32[N,2,"s q",?] @conv1 <- ["conv1"]
  %a, %"z z" = Split(%c) {axis=1, num_outputs=2} : f32[N,1,"s q",?], ? @"split \"1\""
  %k:0 = ConstantOfShape(%s) {value=tensor i32[1] [7]} @cos
  %e = Elu(%b) {alpha=1} : f16[2] @elu
  %g = Gemm(%z0, %z0, _) {alpha=0.5, transB=1} @gemm
}
)";

// Parses `text`; on success checks that printing is a fixpoint. Returns whether it parsed.
bool check(const std::string& text) {
  auto g = parse_graph(text);
  if (!g.ok()) {
    const std::string& m = g.status().message();
    EXPECT_EQ(m.rfind("line ", 0), 0u) << "error without a position: " << m;
    return false;
  }
  std::string printed = print_graph(**g);
  auto again = parse_graph(printed);
  EXPECT_TRUE(again.ok()) << again.status().to_string() << "\nprinted from:\n" << text << "\nas:\n" << printed;
  if (again.ok()) {
    EXPECT_EQ(print_graph(**again), printed) << "from:\n" << text;
  }
  return true;
}

TEST(TextFormatFuzz, SeedParses) { EXPECT_TRUE(check(kSeed)); }

TEST(TextFormatFuzz, EveryTruncation) {
  const std::string seed = kSeed;
  int parsed = 0;
  for (size_t n = 0; n < seed.size(); ++n) parsed += check(seed.substr(0, n));
  // Only the cut that drops the final newline leaves a complete graph.
  EXPECT_EQ(parsed, 1);
}

TEST(TextFormatFuzz, RandomBytes) {
  std::mt19937 rng(1234);
  const std::string alphabet = "%@\"[](){},:=?*<>-_./\\ \n\t0123456789aefinx graph const tensor splat f32 Relu";
  for (int iter = 0; iter < 500; ++iter) {
    std::string s(rng() % 200, '\0');
    for (char& c : s) c = iter % 2 ? char(rng() & 0xff) : alphabet[rng() % alphabet.size()];
    if (iter % 4 == 0) s = "graph g () -> () {" + s;
    check(s);
  }
}

TEST(TextFormatFuzz, RandomMutations) {
  std::mt19937 rng(42);
  const std::string seed = kSeed;
  const std::string alphabet = "%@\"[](){},:=?*<>-_./\\ \n0123456789aefinx";
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  // FERRY_FUZZ_ITERATIONS=1000000 for a long run; the default keeps the suite fast.
  const char* env = std::getenv("FERRY_FUZZ_ITERATIONS");
  const int iterations = env ? std::max(1, std::atoi(env)) : 2000;
  int parsed = 0, failed = 0;
  for (int iter = 0; iter < iterations; ++iter) {
    std::string s = seed;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = pick(s.size());
      char c = rng() % 8 ? alphabet[pick(alphabet.size())] : char(rng() & 0xff);
      switch (rng() % 5) {
        case 0: if (!s.empty()) s[at] = c; break;                       // replace a byte
        case 1: s.insert(s.begin() + long(at), c); break;               // insert a byte
        case 2: if (!s.empty()) s.erase(at, 1 + pick(8)); break;        // delete a run
        case 3: s.insert(at, s.substr(pick(s.size()), pick(24))); break;  // duplicate a slice
        case 4: {                                                       // swap two lines
          size_t a = s.find('\n', at), b = a == std::string::npos ? a : s.find('\n', a + 1);
          size_t c2 = b == std::string::npos ? b : s.find('\n', b + 1);
          if (c2 != std::string::npos) {
            std::string first = s.substr(a + 1, b - a), second = s.substr(b + 1, c2 - b);
            s.replace(a + 1, c2 - a, second + first);
          }
          break;
        }
      }
    }
    if (check(s)) ++parsed;
    else ++failed;
  }
  // The mutations must exercise both outcomes to mean anything.
  EXPECT_GT(parsed, iterations / 40);
  EXPECT_GT(failed, iterations / 4);
  std::printf("mutations: %d parsed, %d rejected\n", parsed, failed);
}

}  // namespace
}  // namespace ferry
