// ferry opt IN [-o OUT] [--passes a,b,c] [--split-input-file] [--provenance] [--stats]
// Text IR in, passes, text IR out: the optimizer one pass at a time (passes/pipeline.h
// run_passes), for writing and debugging passes. IN is text IR or any model `ferry`
// loads; without --passes the whole pipeline runs. Passes run for the reference
// target (every fusion, every epilogue activation), as the .ir tests do. With
// --split-input-file the input is cases separated by `// -----` lines (the layout of
// tests/passes/ir/*.ir), each optimized on its own and printed in turn, separated
// the same way.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "frontends/frontend.h"
#include "ir/text_format.h"
#include "ir/verifier.h"
#include "passes/pass_registry.h"
#include "passes/pipeline.h"

namespace ferry::cli {
namespace {

constexpr const char* kOptCmd = "opt";
constexpr const char* kSplit = "// -----";

struct OptOptions {
  std::string input;
  std::string output;
  std::vector<std::string> passes;
  bool split_input_file = false;
  bool provenance = false;
  bool stats = false;
};

/// The cases of a --split-input-file input.
std::vector<std::string> split_cases(const std::string& text) {
  std::vector<std::string> cases(1);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(kSplit, 0) == 0) cases.emplace_back();
    else cases.back() += line + "\n";
  }
  return cases;
}

/// Verifies, types and optimizes one graph; prints it (and the counts to stderr).
Status optimize_one(Graph& g, const OptOptions& o, std::ostream& out) {
  FERRY_TRY(verify(g));
  FERRY_TRY(refresh_shapes(g));
  OptimizeOptions opts;
  opts.verify_each_pass = true;
  PassStats stats;
  FERRY_TRY(o.passes.empty() ? optimize(g, opts, &stats) : run_passes(g, o.passes, reference_target(), opts, &stats));
  PrintOptions po;
  po.show_provenance = o.provenance;
  out << print_graph(g, po);
  if (o.stats)
    for (const auto& [pass, patterns] : stats)
      for (const auto& [name, ps] : patterns)
        std::cerr << pass << "." << name << ": matched " << ps.matched << ", applied " << ps.applied
                  << ", near misses " << ps.near_misses.size() << "\n";
  return Status::Ok();
}

int run_opt(const OptOptions& o) {
  for (const std::string& p : o.passes)
    if (!find_pass(p)) return usage_error(kOptCmd, "no pass named '" + p + "' (passes: " + pass_names() + ")");
  std::ostringstream out;
  if (o.split_input_file) {
    std::ifstream f(o.input);
    if (!f) return model_error(o.input, io_error("cannot read the file"));
    std::stringstream text;
    text << f.rdbuf();
    std::vector<std::string> cases = split_cases(text.str());
    for (size_t i = 0; i < cases.size(); ++i) {
      if (cases[i].find("graph") == std::string::npos) continue;  // a header of comments only
      auto g = parse_graph(cases[i]);
      if (!g.ok()) return model_error(o.input, g.status().with_context("case " + std::to_string(i)));
      if (out.tellp() > 0) out << kSplit << "\n";
      if (Status st = optimize_one(**g, o, out); !st.ok())
        return model_error(o.input, st.with_context("case " + std::to_string(i)));
    }
  } else {
    auto g = load_model(o.input);
    if (!g.ok()) return model_error(o.input, g.status());
    if (Status st = optimize_one(**g, o, out); !st.ok()) return model_error(o.input, st);
  }
  if (o.output.empty() || o.output == "-") {
    std::cout << out.str();
    return kExitOk;
  }
  std::ofstream f(o.output);
  f << out.str();
  if (!f) return model_error(o.output, io_error("cannot write the file"));
  return kExitOk;
}

}  // namespace

Action add_opt_command(CLI::App& app) {
  auto opts = std::make_shared<OptOptions>();
  CLI::App* sub = app.add_subcommand("opt", "Run optimizer passes on text IR and print the result");
  sub->footer("Passes: " + pass_names() +
              ".\nWithout --passes the whole pipeline runs (as `ferry convert --target reference` does), for the\n"
              "reference target. The graph is verified and its shapes re-inferred after every pass. Pass tests\n"
              "are .ir files run this way (tests/passes/ir/).");
  sub->add_option("IN", opts->input, "text IR (or any model ferry loads)")->required()->type_name("FILE");
  sub->add_option("-o,--output", opts->output, "where to write the text IR (default: stdout)")->type_name("OUT");
  sub->add_option("--passes", opts->passes, "passes to run, in order")->delimiter(',')->type_name("a,b,c");
  sub->add_flag("--split-input-file", opts->split_input_file,
                "IN holds cases separated by '// -----' lines: optimize and print each on its own");
  sub->add_flag("--provenance", opts->provenance, "print each node's provenance (<- [...])");
  sub->add_flag("--stats", opts->stats, "print each pattern's matched / applied / near-miss counts to stderr");
  return [opts] { return run_opt(*opts); };
}

}  // namespace ferry::cli
