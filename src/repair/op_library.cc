#include "repair/op_library.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <filesystem>
#include <iterator>

#include <unistd.h>

#include "ir/text_format.h"
#include "ir/verifier.h"
#include "validate/python_bridge.h"

namespace ferry::repair {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLibraryBytes = size_t(64) << 20;

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::optional<AttrKind> library_kind(const std::string& k) {
  if (k == "int") return AttrKind::kInt;
  if (k == "float") return AttrKind::kFloat;
  if (k == "string") return AttrKind::kString;
  if (k == "ints") return AttrKind::kInts;
  if (k == "floats") return AttrKind::kFloats;
  return std::nullopt;
}

/// A value of `kind` that parses, for the syntax check of a graph whose required attributes are unknown.
std::string placeholder(AttrKind kind) {
  switch (kind) {
    case AttrKind::kFloat: return "0.5";
    case AttrKind::kString: return "\"\"";
    case AttrKind::kInts: return "[1]";
    case AttrKind::kFloats: return "[0.5]";
    default: return "1";
  }
}

/// Splits "a: int = 1, b: ints = [1, 2]" at the commas outside brackets and quotes.
std::vector<std::string> split_attr_list(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      cur += c;
      if (c == '\\' && i + 1 < s.size()) cur += s[++i];
      else if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!trim(cur).empty() || !parts.empty()) parts.push_back(trim(cur));
  return parts;
}

Result<OpLibraryAttr> parse_attr_decl(const std::string& decl, const std::string& where) {
  const size_t colon = decl.find(':');
  if (colon == std::string::npos) return invalid_argument(where + ": attribute '" + decl + "' needs a kind: NAME: KIND [= DEFAULT]");
  OpLibraryAttr a;
  a.name = trim(decl.substr(0, colon));
  std::string rest = decl.substr(colon + 1);
  const size_t eq = rest.find('=');
  const std::string kind = trim(rest.substr(0, eq));
  if (a.name.empty() || !std::all_of(a.name.begin(), a.name.end(), is_ident_char))
    return invalid_argument(where + ": '" + a.name + "' is not an attribute name ([A-Za-z0-9_]+)");
  auto k = library_kind(kind);
  if (!k) return invalid_argument(where + ": attribute '" + a.name + "' has kind '" + kind + "' (int, float, string, ints, floats)");
  a.kind = *k;
  if (eq != std::string::npos) {
    a.default_text = trim(rest.substr(eq + 1));
    if (auto v = parse_attr_value(*a.default_text, a.kind); !v.ok())
      return invalid_argument(where + ": default of attribute '" + a.name + "': " + v.status().message());
  }
  return a;
}

/// "op com.example.Foo {a: int = 1}" -> domain, type, attributes.
Status parse_op_line(const std::string& line, const std::string& where, OpLibraryEntry* e) {
  std::string rest = trim(line.substr(2));
  std::string attrs;
  if (const size_t brace = rest.find('{'); brace != std::string::npos) {
    if (rest.back() != '}') return invalid_argument(where + ": the attribute list of an op line ends with '}'");
    attrs = rest.substr(brace + 1, rest.size() - brace - 2);
    rest = trim(rest.substr(0, brace));
  }
  const size_t dot = rest.rfind('.');
  e->domain = dot == std::string::npos ? "" : rest.substr(0, dot);
  e->op_type = dot == std::string::npos ? rest : rest.substr(dot + 1);
  if (e->op_type.empty() || !std::all_of(e->op_type.begin(), e->op_type.end(), is_ident_char))
    return invalid_argument(where + ": '" + rest + "' is not DOMAIN.OP_TYPE (e.g. com.example.MyOp; .MyOp for the default domain)");
  for (const std::string& decl : split_attr_list(attrs)) {
    FERRY_ASSIGN_OR_RETURN(OpLibraryAttr a, parse_attr_decl(decl, where));
    if (e->attr(a.name)) return invalid_argument(where + ": attribute '" + a.name + "' is declared twice");
    e->attrs.push_back(std::move(a));
  }
  return Status::Ok();
}

/// Replaces every `$name` outside strings and comments by its value.
Result<std::string> substitute(const OpLibraryEntry& e, const std::vector<std::pair<std::string, std::string>>& values) {
  std::string out;
  out.reserve(e.graph_text.size());
  const std::string& t = e.graph_text;
  int line = e.graph_line;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '\n') ++line;
    if (c == '"') {  // a quoted name or string: copied as is
      size_t j = i + 1;
      while (j < t.size() && t[j] != '"' && t[j] != '\n') j += t[j] == '\\' ? 2 : 1;
      out.append(t, i, std::min(j + 1, t.size()) - i);
      i = std::min(j, t.size());
      continue;
    }
    if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
      const size_t j = t.find('\n', i);
      out.append(t, i, (j == std::string::npos ? t.size() : j) - i);
      i = (j == std::string::npos ? t.size() : j) - 1;
      continue;
    }
    if (c != '$') {
      out += c;
      continue;
    }
    size_t j = i + 1;
    while (j < t.size() && is_ident_char(t[j])) ++j;
    const std::string name = t.substr(i + 1, j - i - 1);
    const std::string* v = nullptr;
    for (const auto& [n, text] : values)
      if (n == name) v = &text;
    if (!v)
      return invalid_argument(e.file + ":" + std::to_string(line) + ": $" + name +
                              " is not an attribute declared by op " + e.qualified_name());
    out += *v;
    i = j - 1;
  }
  return out;
}

Result<std::unique_ptr<Graph>> parse_entry_graph(const OpLibraryEntry& e,
                                                 const std::vector<std::pair<std::string, std::string>>& values) {
  FERRY_ASSIGN_OR_RETURN(std::string text, substitute(e, values));
  // Blank lines in front: the parser's line numbers are the file's.
  auto g = parse_graph(std::string(size_t(e.graph_line - 1), '\n') + text);
  if (!g.ok()) return invalid_argument(e.file + ": op " + e.qualified_name() + ": " + g.status().message());
  return g;
}

}  // namespace

constexpr const char* kLibraryRulePrefix = "op library ";

std::string library_rule(const OpLibraryEntry& entry) { return kLibraryRulePrefix + entry.origin; }
bool is_library_rule(const std::string& rule) { return rule.rfind(kLibraryRulePrefix, 0) == 0; }

const OpLibraryAttr* OpLibraryEntry::attr(const std::string& name) const {
  for (const OpLibraryAttr& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

Status OpLibrary::add_text(const std::string& text, const std::string& origin, const std::string& python_file) {
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  OpLibraryEntry* cur = nullptr;
  size_t first_new = entries_.size();
  while (std::getline(in, line)) {
    ++lineno;
    const std::string where = origin + ":" + std::to_string(lineno);
    if (line.rfind("op ", 0) == 0) {
      OpLibraryEntry e;
      e.origin = where;
      e.file = origin;
      e.graph_line = lineno + 1;
      e.python_file = python_file;
      FERRY_TRY(parse_op_line(line, where, &e));
      if (find(e.domain, e.op_type))
        return invalid_argument(where + ": op " + e.qualified_name() + " is defined twice (also at " +
                                find(e.domain, e.op_type)->origin + ")");
      entries_.push_back(std::move(e));
      cur = &entries_.back();
      continue;
    }
    if (cur) {
      cur->graph_text += line + "\n";
    } else if (const std::string s = trim(line); !s.empty() && s.rfind("//", 0) != 0) {
      return invalid_argument(where + ": expected an `op DOMAIN.TYPE {attributes}` line before the graph");
    }
  }
  // Syntax check now (required attributes take a placeholder): a typo fails at load, not at first use.
  for (size_t i = first_new; i < entries_.size(); ++i) {
    const OpLibraryEntry& e = entries_[i];
    if (trim(e.graph_text).empty()) return invalid_argument(e.origin + ": op " + e.qualified_name() + " has no graph");
    std::vector<std::pair<std::string, std::string>> values;
    for (const OpLibraryAttr& a : e.attrs) values.emplace_back(a.name, a.default_text.value_or(placeholder(a.kind)));
    FERRY_TRY(parse_entry_graph(e, values).status());
  }
  return Status::Ok();
}

Status OpLibrary::add_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return invalid_argument("op library " + path + ": cannot be read");
  std::string text;
  char buf[65536];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    text.append(buf, size_t(f.gcount()));
    if (text.size() > kMaxLibraryBytes) return invalid_argument("op library " + path + ": larger than 64 MiB");
  }
  return add_text(text, path);
}

// A Python op library runs in the bridge (the user's own file, named on their command line),
// which writes the entries it registered as library text.
Status OpLibrary::add_python_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return invalid_argument("op library " + path + ": no such file");
  FERRY_ASSIGN_OR_RETURN(validate::PythonBridge bridge, validate::find_python_bridge());
  const fs::path dir = fs::temp_directory_path() / ("ferry_op_library_" + std::to_string(::getpid()));
  fs::create_directories(dir, ec);
  const std::string out = (dir / "library.txt").string(), log = (dir / "bridge.log").string();
  auto rc = validate::spawn_python_module(bridge, "ferry.op_library", {"dump", path, "--out", out}, log);
  std::string text, log_text;
  if (std::ifstream f(out, std::ios::binary); f) text.assign(std::istreambuf_iterator<char>(f), {});
  if (std::ifstream f(log, std::ios::binary); f) log_text.assign(std::istreambuf_iterator<char>(f), {});
  fs::remove_all(dir, ec);
  if (!rc.ok()) return rc.status().with_context("op library " + path);
  if (*rc != 0) return invalid_argument("op library " + path + ": python failed (exit " + std::to_string(*rc) + "): " + trim(log_text));
  return add_text(text, path + " (registered text)", fs::absolute(path, ec).string());
}

const OpLibraryEntry* OpLibrary::find(const std::string& domain, const std::string& op_type) const {
  for (const OpLibraryEntry& e : entries_)
    if (e.domain == domain && e.op_type == op_type) return &e;
  return nullptr;
}

Result<std::shared_ptr<const OpLibrary>> load_op_libraries(const std::vector<std::string>& files,
                                                           const std::string& text) {
  if (files.empty() && text.empty()) return std::shared_ptr<const OpLibrary>();
  auto lib = std::make_shared<OpLibrary>();
  for (const std::string& f : files) FERRY_TRY(f.size() > 3 && f.compare(f.size() - 3, 3, ".py") == 0 ? lib->add_python_file(f)
                                                                                                 : lib->add_file(f));
  if (!text.empty()) FERRY_TRY(lib->add_text(text, "<registered>"));
  return std::shared_ptr<const OpLibrary>(std::move(lib));
}

Result<std::unique_ptr<Graph>> instantiate(const OpLibraryEntry& entry,
                                           const std::vector<std::pair<std::string, std::string>>& values) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, parse_entry_graph(entry, values));
  if (Status st = verify(*g); !st.ok())
    return invalid_argument(entry.origin + ": op " + entry.qualified_name() + ": " + st.message());
  return g;
}

}  // namespace ferry::repair
