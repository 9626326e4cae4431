// ir/text_parser.cc — text IR -> Graph (the format is described in ir/text_format.h).
//
// One token of lookahead; no recursion (lists do not nest) except into subgraph
// attributes, bounded by kMaxSubgraphDepth, so hostile input cannot exhaust the
// stack. Node inputs are wired after the whole body is read, which is what lets
// a statement use a value defined further down.
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

#include "ir/text_format.h"
#include "ir/text_lexer.h"

namespace ferry {
namespace {

using text::Tok;
using text::Token;

/// `splat(v)` builds data from a few bytes of text; cap it so that a typo in the
/// dims cannot make the parser allocate gigabytes.
constexpr size_t kMaxSplatBytes = size_t(256) << 20;

class Parser {
 public:
  explicit Parser(std::string_view src) : lex_(src) { tok_ = lex_.next(); }

  Result<std::unique_ptr<Graph>> graph();
  Result<AttrValue> lone_attr_value(AttrKind kind);

 private:
  struct PendingInput {
    Node* node;
    size_t index;
    Token ref;
  };

  Token take() {
    Token t = std::move(tok_);
    tok_ = lex_.next();
    return t;
  }
  Status error(const Token& at, const std::string& msg) const {
    return invalid_model("line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + ": " + msg);
  }
  Status expected(const std::string& what) const {
    if (tok_.is(Tok::kError)) return error(tok_, tok_.text);
    return error(tok_, "expected " + what + ", got " + tok_.describe());
  }
  Status expect_punct(char c, const std::string& where) {
    if (!tok_.is_punct(c)) return expected(std::string("'") + c + "' " + where);
    take();
    return Status::Ok();
  }
  bool at_number() const { return tok_.is(Tok::kNumber) || tok_.is_ident("inf") || tok_.is_ident("nan"); }
  /// Reads `item (, item)* close` or just `close`; an item must follow every ','.
  template <class Item>
  Status list(char close, const std::string& where, Item&& item) {
    if (!tok_.is_punct(close)) {
      while (true) {
        FERRY_TRY(item());
        if (!tok_.is_punct(',')) break;
        take();
      }
    }
    if (!tok_.is_punct(close)) return expected(std::string("',' or '") + close + "' " + where);
    take();
    return Status::Ok();
  }

  /// `name (inputs) [captures (...)] -> (outputs) { body }` into `g`, after `graph`.
  Status graph_rest(Graph& g, int depth);
  Result<AttrValue> subgraph(const std::string& what);
  Status statement();
  Status node(std::vector<Token> outs);
  Status attribute(const OpSchema& schema, AttrMap& attrs);
  Result<AttrValue> attr_value(AttrKind kind, const std::string& what);
  Result<int64_t> read_int(const std::string& what);
  Result<double> read_double(const std::string& what);
  Status read_type(DType* dtype, Shape* shape);
  Result<Shape> read_shape();
  Result<Tensor> tensor_literal();
  Status set_element(Tensor& t, int64_t i, const Token& tok) const;
  Status define(const Token& name, Value* v);
  Result<Value*> lookup(const Token& ref) const;

  text::Lexer lex_;
  Token tok_;
  Graph* g_ = nullptr;
  int depth_ = 0;  // subgraph nesting of the graph being read
  std::unordered_map<std::string, std::pair<Value*, int>> values_;  // name -> value, line defined
  std::vector<PendingInput> pending_;
};

Result<std::unique_ptr<Graph>> Parser::graph() {
  auto g = std::make_unique<Graph>();
  g->info().format = "text";
  if (!tok_.is_ident("graph")) return expected("'graph' at the start of the text");
  take();
  FERRY_TRY(graph_rest(*g, 0));
  if (!tok_.is(Tok::kEnd)) return expected("end of input after the graph");
  return g;
}

Status Parser::graph_rest(Graph& graph, int depth) {
  Graph* g = &graph;
  g_ = g;
  depth_ = depth;
  if (tok_.is(Tok::kIdent) || tok_.is(Tok::kString)) g->info().graph_name = take().text;
  auto typed_list = [&](const char* what, bool captures) -> Status {
    return list(')', std::string("after a ") + what, [&]() -> Status {
      if (!tok_.is(Tok::kValue)) return expected(std::string("a ") + what + " %name");
      Token name = take();
      DType dtype = DType::undefined;
      Shape shape;
      if (tok_.is_punct(':')) {
        take();
        FERRY_TRY(read_type(&dtype, &shape));
      } else if (!tok_.is_punct(',') && !tok_.is_punct(')') && name.text.find(':') != std::string::npos) {
        return error(name, "input name %" + name.text +
                               " contains ':' (names may); for a typed input put a space after the colon: %x: f32[2]");
      }
      return define(name, captures ? g->add_capture(name.text, dtype, shape) : g->add_input(name.text, dtype, shape));
    });
  };
  FERRY_TRY(expect_punct('(', "to open the graph inputs"));
  FERRY_TRY(typed_list("graph input", false));
  if (tok_.is_ident("captures")) {
    Token kw = take();
    if (depth == 0) return error(kw, "only a subgraph captures values (of the graph around it)");
    FERRY_TRY(expect_punct('(', "to open the captures"));
    FERRY_TRY(typed_list("capture", true));
  }
  if (!tok_.is(Tok::kArrow)) return expected("'->' before the graph outputs");
  take();
  FERRY_TRY(expect_punct('(', "to open the graph outputs"));
  std::vector<Token> outputs;
  FERRY_TRY(list(')', "after a graph output", [&]() -> Status {
    if (!tok_.is(Tok::kValue)) return expected("a graph output %name");
    outputs.push_back(take());
    return Status::Ok();
  }));
  FERRY_TRY(expect_punct('{', "to open the graph body"));
  while (!tok_.is_punct('}')) {
    if (tok_.is(Tok::kEnd)) return expected("'}' to close the graph body");
    FERRY_TRY(statement());
  }
  take();

  // Wire references now that every value is known; report them in text order.
  for (const Token& ref : outputs) {
    FERRY_ASSIGN_OR_RETURN(Value * v, lookup(ref));
    g->add_output(v);
  }
  for (const PendingInput& p : pending_) {
    FERRY_ASSIGN_OR_RETURN(Value * v, lookup(p.ref));
    g->set_node_input(p.node, p.index, v);
  }
  return Status::Ok();
}

// graph name (inputs) [captures (...)] -> (outputs) { ... }: its own scope; the
// enclosing graph's scope is restored afterwards.
Result<AttrValue> Parser::subgraph(const std::string& what) {
  if (!tok_.is_ident("graph")) return expected("'graph name (...) -> (...) { ... }' for " + what);
  Token kw = take();
  if (depth_ + 1 > kMaxSubgraphDepth)
    return error(kw, "subgraphs nest deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
  Graph* outer = g_;
  const int outer_depth = depth_;
  auto outer_values = std::move(values_);
  auto outer_pending = std::move(pending_);
  values_.clear();
  pending_.clear();
  auto sub = std::make_shared<Graph>();
  sub->info().format = "text";
  Status st = graph_rest(*sub, outer_depth + 1);
  g_ = outer;
  depth_ = outer_depth;
  values_ = std::move(outer_values);
  pending_ = std::move(outer_pending);
  FERRY_TRY(st);
  return AttrValue(SubgraphPtr(std::move(sub)));
}

Result<AttrValue> Parser::lone_attr_value(AttrKind kind) {
  FERRY_ASSIGN_OR_RETURN(AttrValue v, attr_value(kind, std::string("a value of kind ") + attr_kind_name(kind)));
  if (!tok_.is(Tok::kEnd)) return expected("end of input after the value");
  return v;
}

// [%a, %b =] const <tensor>  |  [%a, %b =] Op(...) ...
Status Parser::statement() {
  std::vector<Token> outs;
  if (tok_.is(Tok::kValue)) {
    outs.push_back(take());
    while (tok_.is_punct(',')) {
      take();
      if (!tok_.is(Tok::kValue)) return expected("another result %name after ','");
      outs.push_back(take());
    }
    FERRY_TRY(expect_punct('=', "after the result names"));
  }
  if (tok_.is_ident("const")) {
    Token kw = take();
    if (outs.size() != 1)
      return error(kw, "a constant defines exactly one value (%name = const ...), got " +
                           std::to_string(outs.size()));
    FERRY_ASSIGN_OR_RETURN(Tensor data, tensor_literal());
    return define(outs[0], g_->add_constant(outs[0].text, std::move(data)));
  }
  if (!tok_.is(Tok::kIdent))
    return expected(outs.empty() ? "a statement (%name = Op(...) or %name = const ...) or '}'"
                                 : "an op name or 'const'");
  return node(std::move(outs));
}

// Op(%x, _, %w) {attr=value, ...} : type, ... @name <- ["source", ...]
Status Parser::node(std::vector<Token> outs) {
  Token op_tok = take();
  std::optional<Op> op = op_from_name(op_tok.text);
  if (!op) return error(op_tok, "unknown op '" + op_tok.text + "'");
  const OpSchema& schema = op_schema(*op);
  FERRY_TRY(expect_punct('(', "after " + op_tok.text));
  std::vector<std::optional<Token>> args;
  FERRY_TRY(list(')', "in the inputs of " + op_tok.text, [&]() -> Status {
    if (tok_.is(Tok::kValue)) {
      args.push_back(take());
    } else if (tok_.is_ident("_")) {
      take();
      args.push_back(std::nullopt);
    } else {
      return expected("an input %name, or _ for an omitted optional input");
    }
    return Status::Ok();
  }));

  AttrMap attrs;
  if (tok_.is_punct('{')) {
    take();
    FERRY_TRY(list('}', "in the attributes of " + op_tok.text, [&] { return attribute(schema, attrs); }));
  }

  std::vector<std::pair<DType, Shape>> types;
  if (tok_.is_punct(':')) {
    Token colon = take();
    do {
      if (!types.empty()) take();  // the ','
      DType dtype;
      Shape shape;
      FERRY_TRY(read_type(&dtype, &shape));
      types.emplace_back(dtype, std::move(shape));
    } while (tok_.is_punct(','));
    if (types.size() != outs.size())
      return error(colon, op_tok.text + " has " + std::to_string(outs.size()) + " result(s) but " +
                              std::to_string(types.size()) + " type(s)");
  }

  std::optional<std::string> name;
  if (tok_.is(Tok::kNodeName)) name = take().text;
  std::vector<std::string> provenance;
  if (tok_.is(Tok::kBackArrow)) {
    take();
    FERRY_TRY(expect_punct('[', "after '<-' (provenance is a list of quoted names)"));
    FERRY_TRY(list(']', "in the provenance list", [&]() -> Status {
      if (!tok_.is(Tok::kString)) return expected("a quoted source node name");
      provenance.push_back(take().text);
      return Status::Ok();
    }));
  }

  Node* n = g_->add_node(*op, std::vector<Value*>(args.size(), nullptr), outs.size(), std::move(attrs),
                         name.value_or(""));
  if (name && name->empty()) n->set_name("");  // add_node would have made one up
  n->provenance() = std::move(provenance);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i]) pending_.push_back({n, i, std::move(*args[i])});
  for (size_t i = 0; i < outs.size(); ++i) {
    Value* v = n->output(i);
    v->set_name(outs[i].text);
    if (!types.empty()) v->set_type(types[i].first, types[i].second);
    FERRY_TRY(define(outs[i], v));
  }
  return Status::Ok();
}

Status Parser::attribute(const OpSchema& schema, AttrMap& attrs) {
  if (!tok_.is(Tok::kIdent) && !tok_.is(Tok::kString)) return expected("an attribute name");
  Token name = take();
  const AttrSpec* spec = schema.find_attr(name.text);
  if (!spec) {
    std::string known;
    for (const AttrSpec& a : schema.attrs) known += (known.empty() ? "" : ", ") + a.name;
    return error(name, schema.name + " has no attribute '" + name.text + "' (" +
                           (known.empty() ? "it has none" : "it has: " + known) + ")");
  }
  if (attrs.has(name.text)) return error(name, "attribute '" + name.text + "' is given twice");
  FERRY_TRY(expect_punct('=', "after attribute name '" + name.text + "'"));
  FERRY_ASSIGN_OR_RETURN(
      AttrValue v, attr_value(spec->kind, "attribute '" + name.text + "' of " + schema.name + " (" +
                                              attr_kind_name(spec->kind) + ")"));
  attrs.set(name.text, std::move(v));
  return Status::Ok();
}

Result<AttrValue> Parser::attr_value(AttrKind kind, const std::string& what) {
  switch (kind) {
    case AttrKind::kInt: {
      FERRY_ASSIGN_OR_RETURN(int64_t v, read_int(what));
      return AttrValue(v);
    }
    case AttrKind::kFloat: {
      FERRY_ASSIGN_OR_RETURN(double v, read_double(what));
      return AttrValue(v);
    }
    case AttrKind::kString:
      if (!tok_.is(Tok::kString)) return expected("a quoted string for " + what);
      return AttrValue(take().text);
    case AttrKind::kGraph: return subgraph(what);
    case AttrKind::kTensor:
      if (!tok_.is_ident("tensor")) return expected("'tensor <dtype>[dims] [values]' for " + what);
      take();
      {
        FERRY_ASSIGN_OR_RETURN(Tensor t, tensor_literal());
        return AttrValue(std::move(t));
      }
    default:
      break;
  }
  // The list kinds: [item, item, ...]
  if (!tok_.is_punct('[')) return expected("'[' to open the list for " + what);
  take();
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  FERRY_TRY(list(']', "in the list for " + what, [&]() -> Status {
    if (kind == AttrKind::kInts) {
      FERRY_ASSIGN_OR_RETURN(int64_t v, read_int(what));
      ints.push_back(v);
    } else if (kind == AttrKind::kFloats) {
      FERRY_ASSIGN_OR_RETURN(double v, read_double(what));
      floats.push_back(v);
    } else {
      if (!tok_.is(Tok::kString)) return expected("a quoted string for " + what);
      strings.push_back(take().text);
    }
    return Status::Ok();
  }));
  if (kind == AttrKind::kInts) return AttrValue(std::move(ints));
  if (kind == AttrKind::kFloats) return AttrValue(std::move(floats));
  return AttrValue(std::move(strings));
}

Result<int64_t> Parser::read_int(const std::string& what) {
  if (!tok_.is(Tok::kNumber)) return expected("an integer for " + what);
  Token t = take();
  auto v = text::parse_int64(t.text);
  if (!v) return error(t, "expected an integer for " + what + ", got '" + t.text + "'");
  return *v;
}

Result<double> Parser::read_double(const std::string& what) {
  if (!at_number()) return expected("a number for " + what);
  Token t = take();
  auto v = text::parse_double(t.text);
  if (!v) return error(t, "expected a number for " + what + ", got '" + t.text + "'");
  return *v;
}

// ? | ?[dims] | dtype[dims] | dtype[*]
Status Parser::read_type(DType* dtype, Shape* shape) {
  if (tok_.is_punct('?')) {
    take();
    *dtype = DType::undefined;
    if (!tok_.is_punct('[')) {
      *shape = Shape::unknown_rank();
      return Status::Ok();
    }
  } else if (tok_.is(Tok::kIdent)) {
    Token t = take();
    auto dt = dtype_from_name(t.text);
    if (!dt) return error(t, "unknown dtype '" + t.text + "'");
    *dtype = *dt;
    if (!tok_.is_punct('[')) return expected("'[' with the dims after " + t.text + " (" + t.text + "[*] if the rank is unknown)");
  } else {
    return expected("a type such as f32[N,3], f32[*] or ?");
  }
  FERRY_ASSIGN_OR_RETURN(*shape, read_shape());
  return Status::Ok();
}

// [*] | [dim, ...] with dim = size | symbol | "quoted symbol" | ?
Result<Shape> Parser::read_shape() {
  FERRY_TRY(expect_punct('[', "to open the dims"));
  if (tok_.is_punct('*')) {
    take();
    FERRY_TRY(expect_punct(']', "after '*' (unknown rank)"));
    return Shape::unknown_rank();
  }
  std::vector<Dim> dims;
  FERRY_TRY(list(']', "in the dims", [&]() -> Status {
    if (tok_.is(Tok::kNumber)) {
      Token t = take();
      auto v = text::parse_int64(t.text);
      if (!v || *v < 0 || *v > kMaxDim)
        return error(t, "dimension '" + t.text + "' is not a size in [0, 2^40] (write ? for an unknown one)");
      dims.emplace_back(*v);
    } else if (tok_.is_punct('?')) {
      take();
      dims.emplace_back(Dim::unknown());
    } else if (tok_.is(Tok::kIdent) || tok_.is(Tok::kString)) {
      dims.push_back(Dim::symbol(take().text));
    } else {
      return expected("a dimension (3, N, \"quoted symbol\" or ?)");
    }
    return Status::Ok();
  }));
  return Shape(std::move(dims));
}

// ? | dtype[sizes] [v, ...] | dtype[sizes] splat(v)
Result<Tensor> Parser::tensor_literal() {
  if (tok_.is_punct('?')) {
    take();
    return Tensor();
  }
  if (!tok_.is(Tok::kIdent)) return expected("a constant type such as f32[2,3]");
  Token type_tok = take();
  auto dtype = dtype_from_name(type_tok.text);
  if (!dtype) return error(type_tok, "unknown dtype '" + type_tok.text + "'");
  FERRY_TRY(expect_punct('[', "with the constant's dims"));
  std::vector<int64_t> dims;
  FERRY_TRY(list(']', "in the constant's dims", [&]() -> Status {
    if (!tok_.is(Tok::kNumber)) return expected("a static size (constants have static dims)");
    Token t = take();
    auto v = text::parse_int64(t.text);
    if (!v || *v < 0 || *v > kMaxDim) return error(t, "constant dimension '" + t.text + "' is not a size in [0, 2^40]");
    dims.push_back(*v);
    return Status::Ok();
  }));
  std::string type = type_tok.text + "[" + dims_to_string(dims, ',') + "]";
  std::optional<int64_t> numel = checked_numel(dims);
  if (!numel) return error(type_tok, "constant " + type + " has too many elements");

  if (tok_.is_ident("splat")) {
    Token splat = take();
    FERRY_TRY(expect_punct('(', "after splat"));
    if (!tok_.is(Tok::kNumber) && !tok_.is(Tok::kIdent)) return expected("the value to splat");
    Token value = take();
    FERRY_TRY(expect_punct(')', "after the splat value"));
    if (size_t(*numel) > kMaxSplatBytes / dtype_size(*dtype))
      return error(splat, "splat constant " + type + " is larger than the text format allows (" +
                              std::to_string(kMaxSplatBytes >> 20) + " MiB)");
    auto zeros = Tensor::zeros(*dtype, dims);  // the tensor size limit (set_tensor_size_limit) applies
    if (!zeros.ok()) return error(splat, zeros.status().message());
    Tensor t = std::move(zeros).value();
    for (int64_t i = 0; i < *numel; ++i) FERRY_TRY(set_element(t, i, value));
    return t;
  }
  if (tok_.is_punct('<'))
    return error(tok_, "the data of constant " + type +
                           " was left out when printing (<N elements>); print with max_constant_elements = -1");
  FERRY_TRY(expect_punct('[', "with the values of constant " + type + " (or splat(v))"));
  // Collect first and count, so that absurd dims fail before anything is allocated.
  std::vector<Token> items;
  FERRY_TRY(list(']', "in the values of constant " + type, [&]() -> Status {
    if (!tok_.is(Tok::kNumber) && !tok_.is(Tok::kIdent)) return expected("a value of constant " + type);
    items.push_back(take());
    return Status::Ok();
  }));
  if (int64_t(items.size()) != *numel)
    return error(type_tok, "constant " + type + " needs " + std::to_string(*numel) + " values, got " +
                               std::to_string(items.size()));
  auto zeros = Tensor::zeros(*dtype, dims);
  if (!zeros.ok()) return error(type_tok, zeros.status().message());
  Tensor t = std::move(zeros).value();
  for (int64_t i = 0; i < *numel; ++i) FERRY_TRY(set_element(t, i, items[size_t(i)]));
  return t;
}

template <class T>
bool store_integer(uint8_t* p, const std::string& s) {
  T v;
  if constexpr (std::is_signed_v<T>) {
    auto x = text::parse_int64(s);
    if (!x || *x < std::numeric_limits<T>::min() || *x > std::numeric_limits<T>::max()) return false;
    v = T(*x);
  } else {
    auto x = text::parse_uint64(s);
    if (!x || *x > std::numeric_limits<T>::max()) return false;
    v = T(*x);
  }
  std::memcpy(p, &v, sizeof v);
  return true;
}

Status Parser::set_element(Tensor& t, int64_t i, const Token& tok) const {
  uint8_t* p = t.raw() + size_t(i) * dtype_size(t.dtype());
  const std::string& s = tok.text;
  auto store_float = [&](auto convert) {
    auto f = text::parse_float(s);
    if (!f) return false;
    auto v = convert(*f);
    std::memcpy(p, &v, sizeof v);
    return true;
  };
  bool ok = false;
  switch (t.dtype()) {
    case DType::f32: ok = store_float([](float f) { return f; }); break;
    case DType::f16: ok = store_float([](float f) { return f32_to_f16(f); }); break;
    case DType::bf16: ok = store_float([](float f) { return f32_to_bf16(f); }); break;
    case DType::f64: {
      auto d = text::parse_double(s);
      if ((ok = d.has_value())) std::memcpy(p, &*d, sizeof(double));
      break;
    }
    case DType::boolean:
      ok = tok.is_ident("true") || tok.is_ident("false");
      if (ok) *p = tok.is_ident("true") ? 1 : 0;
      break;
    case DType::i8: ok = store_integer<int8_t>(p, s); break;
    case DType::u8: ok = store_integer<uint8_t>(p, s); break;
    case DType::i16: ok = store_integer<int16_t>(p, s); break;
    case DType::u16: ok = store_integer<uint16_t>(p, s); break;
    case DType::i32: ok = store_integer<int32_t>(p, s); break;
    case DType::u32: ok = store_integer<uint32_t>(p, s); break;
    case DType::i64: ok = store_integer<int64_t>(p, s); break;
    case DType::u64: ok = store_integer<uint64_t>(p, s); break;
    case DType::undefined: break;
  }
  if (ok) return Status::Ok();
  const char* want = t.dtype() == DType::boolean ? "true or false" : is_floating(t.dtype()) ? "a number" : "an integer in range";
  return error(tok, "'" + s + "' is not a valid " + dtype_name(t.dtype()) + " value (expected " + want + ")");
}

Status Parser::define(const Token& name, Value* v) {
  auto [it, inserted] = values_.emplace(name.text, std::make_pair(v, name.line));
  if (!inserted)
    return error(name, "value " + name.describe() + " is already defined at line " + std::to_string(it->second.second));
  return Status::Ok();
}

Result<Value*> Parser::lookup(const Token& ref) const {
  auto it = values_.find(ref.text);
  if (it == values_.end()) return error(ref, "value " + ref.describe() + " is never defined");
  return it->second.first;
}

}  // namespace

Result<std::unique_ptr<Graph>> parse_graph(const std::string& text) { return Parser(text).graph(); }

Result<AttrValue> parse_attr_value(const std::string& text, AttrKind kind) {
  return Parser(text).lone_attr_value(kind);
}

}  // namespace ferry
