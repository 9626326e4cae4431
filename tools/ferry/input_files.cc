// tools/ferry/input_files.cc — see input_files.h.
#include "input_files.h"

#include "cli_common.h"
#include "runtime/interpreter.h"
#include "validate/npy.h"

namespace ferry::cli {

int check_input_syntax(const char* command, const std::vector<std::string>& texts) {
  for (const std::string& text : texts) {
    size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
      return usage_error(command, "--input '" + text + "' is not of the form NAME=FILE.npy");
  }
  return -1;
}

int read_input_files(const char* command, const std::vector<std::string>& texts, const Graph& g,
                     std::map<std::string, Tensor>* given, std::map<std::string, std::string>* files) {
  std::vector<std::string> names;
  for (const Value* v : g.inputs()) names.push_back(v->name());
  for (const std::string& text : texts) {
    auto kv = split_assignment(text, names);  // a name containing '=' still matches its input
    if (!kv.ok()) return usage_error(command, "--input " + kv.status().message());
    const auto& [name, file] = *kv;
    if (given->count(name)) return usage_error(command, "--input given twice for '" + name + "'");
    const Value* in = g.find_value(name);
    if (!in || !in->is_graph_input()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
      return model_error(file, invalid_argument("the model has no input named '" + name + "' (inputs: " +
                                                (list.empty() ? "none" : list) + ")"));
    }
    auto t = read_npy(file);
    if (!t.ok()) return model_error(file, t.status().with_context("input '" + name + "'"));
    if (Status st = check_input(*in, *t); !st.ok()) return model_error(file, st);
    if (files) (*files)[name] = file;
    given->emplace(name, std::move(t).value());
  }
  return -1;
}

}  // namespace ferry::cli
