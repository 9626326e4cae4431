// tests/passes/ir_check.h — pass tests as .ir files (tests/passes/ir/), in the spirit
// of MLIR's FileCheck tests: text IR in, the passes `ferry opt --passes` runs, checks
// on the text IR out.
//
//   // RUN: --passes eliminate_identity          (for every case below; a case may have its own)
//
//   // -----
//   // Identity forwards its input.
//   graph g (%x: f32[2]) -> (%y) {
//     %i = Identity(%x) @id
//     %y = Relu(%i) @relu
//   }
//   // CHECK:      %y = Relu(%x)
//   // CHECK-NOT:  Identity
//   // STATS:      identity applied=1
//
// A file is cases separated by `// -----` lines; text before the first separator is
// the header (a RUN line and comments). A case's graph is parsed as text IR (the
// directives are comments to the parser). The output is the optimized graph printed
// without provenance. Directives, in the order they are checked:
//   CHECK: s            a line containing s, after the line the previous CHECK matched
//   CHECK-NEXT: s       the line right after the previous match contains s
//   CHECK-SAME: s       the previous match's line contains s after what it matched
//   CHECK-NOT: s        no line between the previous match and the next match (or the
//                       end) contains s
//   CHECK-COUNT-n: s    exactly n lines of the whole output contain s (unlike FileCheck's,
//                       not n consecutive matches)
//   OUTPUT:             the `//` comment lines that follow, without `// `, are the whole
//                       output, exactly
//   STATS: p k=v ...    pattern p (or pass.p when several passes run) has matched=, applied=
//                       and near_misses= counts as given
//   NEAR-MISS: p: text  pattern p recorded a near miss whose reason contains text
//     [<- a, b]         ... and whose source nodes are a, b
//   RTOL: x             the tolerance of the optimized == unoptimized check (default 1e-6)
// s is matched after trimming; whitespace inside it counts. Every case also checks
// that the optimized graph verifies and computes what the input computes on seeded
// random inputs (pass_test_util.h expect_same_outputs).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "passes/rewriter.h"

namespace ferry::testing {

struct IrDirective {
  std::string kind;  ///< "CHECK", "CHECK-NEXT", "CHECK-SAME", "CHECK-NOT", "CHECK-COUNT", "STATS", "NEAR-MISS"
  std::string text;
  int count = 0;  ///< CHECK-COUNT-n
  int line = 0;   ///< in the .ir file
};

struct IrCase {
  std::string file;
  int line = 0;  ///< first line of the case in the file
  std::string text;
  std::vector<std::string> passes;
  double rtol = 1e-6;
  std::vector<IrDirective> directives;
  bool has_output = false;
  std::string output;  ///< OUTPUT: the expected output
};

/// gtest prints a failed case as its file and line, not as bytes.
inline void PrintTo(const IrCase& c, std::ostream* os) { *os << c.file << ":" << c.line; }

inline std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// "--passes a,b" -> {a, b}.
inline std::vector<std::string> run_passes_of(const std::string& run) {
  std::vector<std::string> passes;
  std::string rest = trim(run);
  if (rest.rfind("--passes", 0) != 0) return passes;
  std::stringstream ss(trim(rest.substr(8)));
  for (std::string p; std::getline(ss, p, ',');)
    if (!trim(p).empty()) passes.push_back(trim(p));
  return passes;
}

/// Reads one directive from a comment line's text (after "//"); false when it is none.
inline bool parse_directive(const std::string& comment, int line, IrCase& c, bool* in_output) {
  const std::string t = trim(comment);
  const size_t colon = t.find(':');
  const std::string kind = colon == std::string::npos ? "" : t.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : trim(t.substr(colon + 1));
  if (kind == "RUN") {
    c.passes = run_passes_of(arg);
  } else if (kind == "RTOL") {
    c.rtol = std::strtod(arg.c_str(), nullptr);
  } else if (kind == "OUTPUT") {
    c.has_output = true;
    *in_output = true;
  } else if (kind.rfind("CHECK-COUNT-", 0) == 0) {
    c.directives.push_back({"CHECK-COUNT", arg, std::atoi(kind.c_str() + 12), line});
  } else if (kind == "CHECK" || kind == "CHECK-NEXT" || kind == "CHECK-SAME" || kind == "CHECK-NOT" ||
             kind == "STATS" || kind == "NEAR-MISS") {
    c.directives.push_back({kind, arg, 0, line});
  } else {
    return false;
  }
  return true;
}

/// The cases of an .ir file; the header's RUN line applies to cases without their own.
inline std::vector<IrCase> read_ir_cases(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  std::vector<IrCase> cases(1);
  cases[0].file = path;
  std::vector<std::string> header_passes;
  bool in_output = false;
  int n = 0;
  for (std::string line; std::getline(f, line);) {
    ++n;
    if (trim(line).rfind("// -----", 0) == 0) {
      if (cases.size() == 1) header_passes = cases[0].passes;
      IrCase next;
      next.file = path;
      next.line = n + 1;
      next.passes = header_passes;
      cases.push_back(std::move(next));
      in_output = false;
      continue;
    }
    IrCase& c = cases.back();
    c.text += line + "\n";
    const std::string t = trim(line);
    if (t.rfind("//", 0) != 0) {
      in_output = false;
      continue;
    }
    const std::string comment = t.substr(2);
    if (parse_directive(comment, n, c, &in_output)) continue;
    if (in_output) c.output += (comment.rfind(" ", 0) == 0 ? comment.substr(1) : comment) + "\n";
  }
  cases.erase(cases.begin());  // the header
  return cases;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

/// Checks the STATS / NEAR-MISS directive `d`; "" when it holds.
inline std::string check_stats(const IrDirective& d, const IrCase& c, const PassStats& stats) {
  std::stringstream ss(d.text);
  std::string pattern;
  std::getline(ss, pattern, d.kind == "NEAR-MISS" ? ':' : ' ');
  std::string pass = c.passes.size() == 1 ? c.passes[0] : "";
  if (size_t dot = pattern.find('.'); dot != std::string::npos) {
    pass = pattern.substr(0, dot);
    pattern = pattern.substr(dot + 1);
  }
  PatternStats s;
  if (auto p = stats.find(pass); p != stats.end())
    if (auto q = p->second.find(pattern); q != p->second.end()) s = q->second;
  if (d.kind == "NEAR-MISS") {
    std::string want, nodes;
    std::getline(ss, want);
    if (size_t arrow = want.find(" <- "); arrow != std::string::npos) {
      nodes = trim(want.substr(arrow + 4));
      want = want.substr(0, arrow);
    }
    auto node_list = [](const NearMiss& m) {
      std::string l;
      for (const std::string& n : m.source_nodes) l += (l.empty() ? "" : ", ") + n;
      return l;
    };
    for (const NearMiss& m : s.near_misses)
      if (m.reason.find(trim(want)) != std::string::npos && (nodes.empty() || node_list(m) == nodes)) return "";
    std::string got;
    for (const NearMiss& m : s.near_misses) got += "\n    " + m.reason + " <- " + node_list(m);
    return pass + "." + pattern + " has no near miss '" + trim(want) + "'; it has:" + (got.empty() ? " none" : got);
  }
  for (std::string kv; ss >> kv;) {
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    const int64_t want = std::atoll(kv.c_str() + eq + 1);
    const int64_t got = key == "matched" ? s.matched : key == "applied" ? s.applied : int64_t(s.near_misses.size());
    if (key != "matched" && key != "applied" && key != "near_misses") return "unknown count '" + key + "'";
    if (got != want) return pass + "." + pattern + " " + key + " is " + std::to_string(got) + ", want " + kv;
  }
  return "";
}

/// Checks every directive of `c` against `output`; returns the failures, one a line.
inline std::string check_ir(const IrCase& c, const std::string& output, const PassStats& stats) {
  std::string failures;
  auto fail = [&](const IrDirective& d, const std::string& why) {
    failures += c.file + ":" + std::to_string(d.line) + ": " + d.kind + ": " + d.text + "\n  " + why + "\n";
  };
  if (c.has_output && output != c.output) failures += c.file + ":" + std::to_string(c.line) + ": OUTPUT differs\n";
  const std::vector<std::string> lines = lines_of(output);
  size_t cursor = 0;        // the next line a CHECK may match
  size_t last = SIZE_MAX;   // the line the previous CHECK matched
  size_t last_end = 0;      // where in it the match ended
  std::vector<const IrDirective*> nots;  // CHECK-NOTs waiting for the next match
  auto contains = [&](size_t l, const std::string& s) { return lines[l].find(s) != std::string::npos; };
  auto settle_nots = [&](size_t until) {
    for (const IrDirective* d : nots)
      for (size_t l = cursor; l < until && l < lines.size(); ++l)
        if (contains(l, d->text)) fail(*d, "found on output line " + std::to_string(l + 1) + ": " + lines[l]);
    nots.clear();
  };
  for (const IrDirective& d : c.directives) {
    if (d.kind == "CHECK-NOT") {
      nots.push_back(&d);
    } else if (d.kind == "CHECK" || d.kind == "CHECK-NEXT") {
      size_t at = SIZE_MAX;
      if (d.kind == "CHECK") {
        for (size_t l = cursor; l < lines.size() && at == SIZE_MAX; ++l)
          if (contains(l, d.text)) at = l;
      } else if (last != SIZE_MAX && last + 1 < lines.size() && contains(last + 1, d.text)) {
        at = last + 1;
      }
      if (at == SIZE_MAX) {
        fail(d, d.kind == "CHECK" ? "not found after output line " + std::to_string(cursor)
                                  : "not on the line after the previous match");
        continue;
      }
      settle_nots(at);
      last = at;
      last_end = lines[at].find(d.text) + d.text.size();
      cursor = at + 1;
    } else if (d.kind == "CHECK-SAME") {
      if (last == SIZE_MAX || lines[last].find(d.text, last_end) == std::string::npos) {
        fail(d, "not on the previous match's line");
        continue;
      }
      last_end = lines[last].find(d.text, last_end) + d.text.size();
    } else if (d.kind == "CHECK-COUNT") {
      int n = 0;
      for (size_t l = 0; l < lines.size(); ++l) n += contains(l, d.text);
      if (n != d.count) fail(d, "on " + std::to_string(n) + " lines, want " + std::to_string(d.count));
    } else {
      if (std::string why = check_stats(d, c, stats); !why.empty()) fail(d, why);
    }
  }
  settle_nots(lines.size());
  if (!failures.empty()) failures += "output:\n" + output;
  return failures;
}

}  // namespace ferry::testing
