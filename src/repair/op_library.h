// repair/op_library.h — user decompositions of custom ops (`--op-library FILE`,
// `ferry.register_ops`): a text file of text-IR graphs, one per op ferry cannot
// import, that the ONNX importer inlines in place of each node of that op.
//
//   // my_ops.fir
//   op com.example.ScaledTanh {alpha: float = 1.0}
//   graph scaled_tanh (%x: f32[*]) -> (%y) {
//     %a = const f32[] [$alpha]
//     %t = Tanh(%x)
//     %y = Mul(%t, %a)
//   }
//
// An entry is an `op DOMAIN.TYPE {attributes}` line (the domain may be empty for
// the default domain: `op .MyOp`) followed by one graph in the text IR
// (ir/text_format.h). The node's inputs bind the graph's inputs in order, its
// outputs the graph's outputs. Declared attributes are `name: kind [= default]`,
// kind one of int, float, string, ints, floats; `$name` in the graph is replaced
// by the node's value of that attribute (or the default) as the text IR writes it.
// A node with an attribute the entry does not declare, a required attribute
// missing, a different input count or an input dtype other than a typed graph
// input's is refused with the reason; a graph that does not parse or verify once
// its attributes are in names the file and line.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/attr.h"
#include "ir/graph.h"

namespace ferry::repair {

struct OpLibraryAttr {
  std::string name;
  AttrKind kind = AttrKind::kInt;
  std::optional<std::string> default_text;  ///< as written in the file; nullopt: required
};

struct OpLibraryEntry {
  std::string domain;   ///< "" for the default domain
  std::string op_type;
  std::vector<OpLibraryAttr> attrs;
  std::string graph_text;  ///< the graph, `$name` references unresolved
  std::string origin;      ///< "FILE:LINE" of the `op` line
  std::string file;        ///< FILE of origin
  int graph_line = 1;      ///< the file line the graph text starts on
  /// The Python file that registered the entry (it may hold a reference implementation), else "".
  std::string python_file;

  std::string qualified_name() const { return (domain.empty() ? "" : domain + ".") + op_type; }
  const OpLibraryAttr* attr(const std::string& name) const;
};

class OpLibrary {
 public:
  /// Adds the entries of `text`; `origin` names it in errors (a file path, "<python>").
  Status add_text(const std::string& text, const std::string& origin, const std::string& python_file = "");
  /// Reads a text-IR library file.
  Status add_file(const std::string& path);
  /// Runs a Python op library file (it calls ferry.register_ops) in the Python bridge and adds
  /// what it registered; its entries keep the file for their reference functions.
  Status add_python_file(const std::string& path);
  const OpLibraryEntry* find(const std::string& domain, const std::string& op_type) const;
  const std::vector<OpLibraryEntry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<OpLibraryEntry> entries_;
};

/// The RepairRecord::rule of a node an entry replaced ("op library FILE:LINE"), and its test.
std::string library_rule(const OpLibraryEntry& entry);
bool is_library_rule(const std::string& rule);

/// The libraries of `files` (text, or .py: add_python_file) and of `text` (origin "<registered>") as one; null when both are empty.
Result<std::shared_ptr<const OpLibrary>> load_op_libraries(const std::vector<std::string>& files,
                                                           const std::string& text = "");

/// The entry's graph with `values` (attribute name -> text-IR value text, every
/// declared attribute present) substituted, parsed and verified.
Result<std::unique_ptr<Graph>> instantiate(const OpLibraryEntry& entry,
                                           const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace ferry::repair
