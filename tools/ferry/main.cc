// ferry — the command-line tool. One file per subcommand (cmd_<name>.cc);
// adding one is that file plus one line in FERRY_COMMANDS.
#include <exception>
#include <iostream>
#include <new>

#include "cli_common.h"
#include "runtime/wait_policy.h"

// X(name): cmd_<name>.cc defines cli::Action add_<name>_command(CLI::App&).
#define FERRY_COMMANDS(X) \
  X(conformance)          \
  X(convert)              \
  X(inspect)              \
  X(ops)                  \
  X(opt)                  \
  X(run)                  \
  X(validate)             \
  X(bench)  /* fast CPU backend */ \
  X(env)      /* evaluate: the machine and the frameworks */ \
  X(evaluate) /* evaluate: the challenge harness */ \
  X(worker)   /* evaluate: one candidate in a child process (hidden) */

namespace ferry::cli {
#define FERRY_DECLARE_COMMAND(name) Action add_##name##_command(CLI::App& app);
FERRY_COMMANDS(FERRY_DECLARE_COMMAND)
#undef FERRY_DECLARE_COMMAND
}  // namespace ferry::cli

namespace {

int run_cli(int argc, char** argv) {
  using namespace ferry::cli;
  CLI::App app("ferry: import, run, validate and evaluate neural network models (ONNX, TensorFlow, PyTorch .pt2).", "ferry");
  app.set_version_flag("--version", std::string("ferry ") + kVersion);
  app.footer(exit_code_footer());
  app.require_subcommand(1);
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string cmd = a->get_subcommands().empty() ? "" : a->get_subcommands().front()->get_name();
    return "ferry: error: " + std::string(e.what()) + "\nRun 'ferry " + cmd + (cmd.empty() ? "" : " ") +
           "--help' for usage.\n";
  });

  std::vector<std::pair<CLI::App*, Action>> commands;
#define FERRY_ADD_COMMAND(name)                                      \
  {                                                                  \
    Action action = add_##name##_command(app);                       \
    commands.emplace_back(app.get_subcommand(#name), std::move(action)); \
  }
  FERRY_COMMANDS(FERRY_ADD_COMMAND)
#undef FERRY_ADD_COMMAND
  for (auto& [sub, action] : commands) sub->footer(sub->get_footer() + "\n\n" + exit_code_footer());

  // "ferry bogus" would otherwise read as "a subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (auto& [sub, action] : commands) {
      if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();  // hidden: group ""
      known |= sub->get_name() == argv[1];
    }
    if (!known) return usage_error("", "unknown command '" + std::string(argv[1]) + "' (commands: " + names + ")");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;  // --help / --version succeed; everything else is usage
  }
  for (auto& [sub, action] : commands)
    if (sub->parsed()) return action();
  return kExitUsage;  // unreachable: require_subcommand(1)
}

}  // namespace

int main(int argc, char** argv) {
  // Idle OpenMP threads spin briefly, then sleep, unless the user chose (runtime/wait_policy.h).
  ferry::apply_default_wait_policy(argv);
  // Bad input must never crash: anything thrown below (std::bad_alloc on an
  // absurd model, a library exception) becomes a model error, exit 2.
  try {
    return run_cli(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "ferry: error: out of memory" << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "ferry: error: " << e.what() << std::endl;
  } catch (...) {
    std::cerr << "ferry: error: unknown exception" << std::endl;
  }
  return ferry::cli::kExitModelError;
}
