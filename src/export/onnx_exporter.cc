#include "export/onnx_exporter.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <ostream>
#include <set>
#include <vector>

#include <functional>
#include <unordered_map>

#include "ir/op_attrs.h"
#include "ir/op_facts.h"
#include "ir/subgraph.h"

namespace ferry {
namespace {

using AP = onnx::AttributeProto;

void set_type(onnx::TypeProto* type, DType dtype, const Shape& shape) {
  auto* tt = type->mutable_tensor_type();
  tt->set_elem_type(dtype_to_onnx(dtype));
  if (!shape.rank_known()) return;
  auto* sp = tt->mutable_shape();
  for (const Dim& d : shape.dims()) {
    auto* dim = sp->add_dim();
    if (d.is_static()) dim->set_dim_value(d.value());
    else if (d.is_symbol()) dim->set_dim_param(d.symbol());
  }
}

void set_value_info(onnx::ValueInfoProto* vi, const Value& v, const std::string& name) {
  vi->set_name(name);
  if (v.dtype() != DType::undefined) set_type(vi->mutable_type(), v.dtype(), v.shape());
}

/// Tensors of at least this many bytes are streamed to the file by write_onnx_file
/// instead of being copied into the ModelProto first.
constexpr size_t kStreamedRawBytes = 4096;

/// `deferred`: where to record a tensor whose raw_data is left out for the writer
/// to stream (nullptr: always set raw_data).
void set_tensor(onnx::TensorProto* p, const Tensor& t, const std::string& name,
                std::vector<const Tensor*>* deferred = nullptr) {
  p->set_name(name);
  p->set_data_type(dtype_to_onnx(t.dtype()));
  for (int64_t d : t.dims()) p->add_dims(d);
  if (deferred) {
    const bool stream = t.raw() && t.nbytes() >= kStreamedRawBytes;
    deferred->push_back(stream ? &t : nullptr);
    if (stream) return;
  }
  // raw_data is little-endian; so is every host ferry builds for.
  p->set_raw_data(t.raw() ? std::string(reinterpret_cast<const char*>(t.raw()), t.nbytes()) : std::string());
}

/// Attributes the IR holds as a ferry dtype name and ONNX as a TensorProto type code.
bool is_dtype_attr(const Node& n, const std::string& name) {
  switch (n.op()) {
    case Op::Cast: return name == "to";
    case Op::EyeLike: return name == "dtype";
    case Op::HannWindow: case Op::HammingWindow: case Op::BlackmanWindow: case Op::MelWeightMatrix:
      return name == "output_datatype";
    default: return false;
  }
}

/// Writes a subgraph attribute's GraphProto (the exporter's, which knows the scopes).
using SubgraphWriter = std::function<Status(const Graph&, onnx::GraphProto*)>;

Status add_attribute(onnx::NodeProto* node, const Node& n, const std::string& name, const AttrValue& value,
                     const SubgraphWriter& write_subgraph) {
  AP* a = node->add_attribute();
  a->set_name(name);
  if (is_dtype_attr(n, name)) {
    // IR: a ferry dtype name; ONNX: the TensorProto enum.
    a->set_type(AP::INT);
    a->set_i(dtype_to_onnx(dtype_from_name(std::get<std::string>(value)).value_or(DType::undefined)));
    return Status::Ok();
  }
  switch (attr_kind(value)) {
    case AttrKind::kInt: a->set_type(AP::INT); a->set_i(std::get<int64_t>(value)); break;
    case AttrKind::kFloat: a->set_type(AP::FLOAT); a->set_f(float(std::get<double>(value))); break;
    case AttrKind::kString: a->set_type(AP::STRING); a->set_s(std::get<std::string>(value)); break;
    case AttrKind::kInts:
      a->set_type(AP::INTS);
      for (int64_t i : std::get<std::vector<int64_t>>(value)) a->add_ints(i);
      break;
    case AttrKind::kFloats:
      a->set_type(AP::FLOATS);
      for (double f : std::get<std::vector<double>>(value)) a->add_floats(float(f));
      break;
    case AttrKind::kStrings:
      a->set_type(AP::STRINGS);
      for (const std::string& s : std::get<std::vector<std::string>>(value)) a->add_strings(s);
      break;
    case AttrKind::kTensor:
      a->set_type(AP::TENSOR);
      set_tensor(a->mutable_t(), std::get<Tensor>(value), "");
      break;
    case AttrKind::kGraph:
      a->set_type(AP::GRAPH);
      if (!std::get<SubgraphPtr>(value)) return internal_error("node " + n.describe() + ": subgraph '" + name + "' is null");
      return write_subgraph(*std::get<SubgraphPtr>(value), a->mutable_g());
  }
  return Status::Ok();
}

/// The opset an attribute of `n` needs beyond the op's own (ops.def's export column):
/// values and attributes that later opsets added to an op that existed before.
int64_t attr_opset_needed(const Node& n) {
  switch (n.op()) {
    case Op::AveragePool: return n.attrs<AveragePoolAttrs>().dilations ? 19 : 0;
    case Op::Pad: return n.attrs<PadAttrs>().mode == "wrap" ? 19 : 0;
    case Op::Resize: return n.attrs<ResizeAttrs>().coordinate_transformation_mode == "half_pixel_symmetric" ? 19 : 0;
    case Op::QuantizeLinear: return n.has_attr("block_size") || n.has_attr("output_dtype") ? 21 : 0;
    case Op::SpaceToDepth: return n.attrs<SpaceToDepthAttrs>().mode != "DCR" ? 28 : 0;
    case Op::Attention: {
      const AttentionAttrs& a = n.attrs<AttentionAttrs>();
      return a.left_window_size != -1 || a.right_window_size != -1 ? 25 : n.num_inputs() > 6 ? 24 : 0;
    }
    case Op::DequantizeLinear: return n.has_attr("output_dtype") ? 23 : n.has_attr("block_size") ? 21 : 0;
    default: return 0;
  }
}

/// The default-domain opset in which node `n` means what it means in the IR.
int64_t opset_needed(const Node& n) {
  const OnnxExport& e = op_facts(n.op()).onnx;
  return e.ferry_domain ? 0 : std::max<int64_t>(e.opset, attr_opset_needed(n));
}

}  // namespace

bool is_ferry_domain_op(Op op) { return op_facts(op).onnx.ferry_domain; }

int32_t dtype_to_onnx(DType dtype) {
  switch (dtype) {
    case DType::f32: return onnx::TensorProto::FLOAT;
    case DType::f16: return onnx::TensorProto::FLOAT16;
    case DType::bf16: return onnx::TensorProto::BFLOAT16;
    case DType::f64: return onnx::TensorProto::DOUBLE;
    case DType::i8: return onnx::TensorProto::INT8;
    case DType::u8: return onnx::TensorProto::UINT8;
    case DType::i16: return onnx::TensorProto::INT16;
    case DType::u16: return onnx::TensorProto::UINT16;
    case DType::i32: return onnx::TensorProto::INT32;
    case DType::u32: return onnx::TensorProto::UINT32;
    case DType::i64: return onnx::TensorProto::INT64;
    case DType::u64: return onnx::TensorProto::UINT64;
    case DType::boolean: return onnx::TensorProto::BOOL;
    case DType::undefined: break;
  }
  return onnx::TensorProto::UNDEFINED;
}

int64_t ir_version_for_opset(int64_t opset) {
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  if (opset == 23) return 11;
  if (opset == 24) return 12;
  if (opset <= 27) return 13;
  return 14;
}

namespace {
int64_t nodes_opset(const Graph& g) {
  int64_t opset = 0;
  for (const Node* n : g.nodes()) {
    opset = std::max(opset, opset_needed(*n));
    for (const SubgraphUse& u : node_subgraphs(*n)) opset = std::max(opset, nodes_opset(*u.graph));
  }
  return opset;
}
}  // namespace

int64_t required_opset(const Graph& g) {
  int64_t opset = kMinExportOpset;
  auto it = g.info().opsets.find("");
  if (it != g.info().opsets.end()) opset = std::max(opset, it->second);
  return std::max(opset, nodes_opset(g));
}

namespace {

/// Writes a graph and, through its nodes' attributes, its subgraphs. ONNX names a
/// value once in the whole model and a subgraph reads enclosing values by name: a
/// capture is written as the name of the node input that binds it, and a subgraph
/// value whose name an enclosing scope already uses is renamed.
class GraphWriter {
 public:
  GraphWriter(std::vector<const Tensor*>* deferred) : deferred_(deferred) {}
  bool uses_ferry_domain = false;

  Status write(const Graph& g, onnx::GraphProto* graph, bool top, int depth);

 private:
  const std::string& name_of(const Value* v) const {
    auto it = names_.find(v);
    return it == names_.end() ? v->name() : it->second;
  }
  std::string fresh(const std::string& base) {
    std::string n = base;
    for (int i = 1; used_.count(n); ++i) n = base + "_" + std::to_string(i);
    used_.insert(n);
    return n;
  }
  Status write_node(const Node& n, const Graph& g, onnx::GraphProto* graph, int depth);

  std::vector<const Tensor*>* deferred_;
  std::unordered_map<const Value*, std::string> names_;
  std::set<std::string> used_;
};

Status GraphWriter::write(const Graph& g, onnx::GraphProto* graph, bool top, int depth) {
  if (depth > kMaxSubgraphDepth) return invalid_model("subgraphs nest deeper than " + std::to_string(kMaxSubgraphDepth));
  for (const Value* v : g.values()) {
    if (v->is_capture()) continue;  // named by the node binding it (write_node)
    names_[v] = top ? v->name() : fresh(v->name());
    if (top) used_.insert(v->name());
  }
  for (const Value* in : g.inputs()) {
    if (top && in->dtype() == DType::undefined) return invalid_model("graph input '" + in->name() + "' has no dtype");
    set_value_info(graph->add_input(), *in, name_of(in));
  }
  // Constants: initializers, except those that are graph outputs (a Constant node
  // produces those, since an output is expected to come from a node or an input).
  std::set<const Value*> const_outputs;
  for (const Value* o : g.outputs())
    if (o->is_constant()) const_outputs.insert(o);
  for (const Value* v : g.values()) {
    if (!v->is_constant()) continue;
    if (const_outputs.count(v)) {
      onnx::NodeProto* c = graph->add_node();
      c->set_op_type("Constant");
      c->set_name(name_of(v));
      c->add_output(name_of(v));
      AP* a = c->add_attribute();
      a->set_name("value");
      a->set_type(AP::TENSOR);
      set_tensor(a->mutable_t(), *v->constant(), "");
    } else {
      set_tensor(graph->add_initializer(), *v->constant(), name_of(v), top ? deferred_ : nullptr);
    }
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topo_order());
  for (const Node* n : order) FERRY_TRY(write_node(*n, g, graph, depth));

  std::set<std::string> output_names;
  for (const Value* o : g.outputs()) {
    if (top && o->dtype() == DType::undefined)
      return invalid_model("graph output '" + o->name() + "' has no dtype (shape inference did not reach it)");
    onnx::ValueInfoProto* vi = graph->add_output();
    set_value_info(vi, *o, name_of(o));
    // A subgraph output that is an enclosing value, or the same value listed twice
    // (ONNX output names are unique): the output reads an Identity.
    if (!o->is_capture() && output_names.insert(name_of(o)).second) continue;
    std::string alias = fresh(name_of(o) + "_out");
    output_names.insert(alias);
    onnx::NodeProto* id = graph->add_node();
    id->set_op_type("Identity");
    id->set_name(alias);
    id->add_input(name_of(o));
    id->add_output(alias);
    vi->set_name(alias);
  }
  return Status::Ok();
}

Status GraphWriter::write_node(const Node& n, const Graph& g, onnx::GraphProto* graph, int depth) {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op_name(n.op()));
  node->set_name(n.name());
  if (is_ferry_domain_op(n.op())) {
    node->set_domain(kFerryDomain);
    uses_ferry_domain = true;
  }
  // Captures are not ONNX inputs: each subgraph reads them by the bound input's name.
  for (const SubgraphUse& u : node_subgraphs(n))
    for (size_t i = 0; i < u.graph->captures().size(); ++i)
      names_[u.graph->captures()[i]] = name_of(n.input(u.capture_begin + i));
  size_t num_inputs = num_formal_inputs(n);
  // Trailing omitted inputs are dropped, except a Loop's M and cond (positional, required in ONNX).
  const size_t keep = n.op() == Op::Loop ? 2 : 0;
  while (num_inputs > keep && !n.input(num_inputs - 1)) --num_inputs;
  for (size_t i = 0; i < num_inputs; ++i) node->add_input(n.input(i) ? name_of(n.input(i)) : "");
  for (const Value* out : n.outputs()) node->add_output(name_of(out));
  SubgraphWriter sub = [&](const Graph& s, onnx::GraphProto* p) {
    p->set_name(s.info().graph_name.empty() ? n.name() + "_body" : s.info().graph_name);
    return write(s, p, false, depth + 1);
  };
  for (const auto& [name, value] : n.attrs().all()) FERRY_TRY(add_attribute(node, n, name, value, sub));
  if (!n.provenance().empty() && n.provenance() != std::vector<std::string>{n.name()}) {
    std::string from;
    for (const std::string& p : n.provenance()) from += (from.empty() ? "" : ", ") + p;
    node->set_doc_string("from: " + from);
  }
  for (const Value* out : n.outputs())
    if (out->dtype() != DType::undefined && !g.is_graph_output(out))
      set_value_info(graph->add_value_info(), *out, name_of(out));
  return Status::Ok();
}

/// export_onnx_model; with `deferred`, large initializers are left without raw_data and
/// listed there by initializer index (nullptr for those that have it).
Result<onnx::ModelProto> build_model(const Graph& g, const OnnxExportOptions& options,
                                     std::vector<const Tensor*>* deferred) {
  const int64_t needed = required_opset(g);
  const int64_t opset = options.opset ? options.opset : needed;
  if (opset < needed)
    return invalid_argument("opset " + std::to_string(opset) + " cannot express this graph; it needs opset " +
                            std::to_string(needed) + " or newer");
  onnx::ModelProto model;
  model.set_ir_version(ir_version_for_opset(opset));
  model.set_producer_name("ferry");
  model.set_producer_version(options.producer_version);
  if (!g.info().doc_string.empty()) model.set_doc_string(g.info().doc_string);
  for (const auto& [key, value] : options.metadata) {
    onnx::StringStringEntryProto* e = model.add_metadata_props();
    e->set_key(key);
    e->set_value(value);
  }
  auto* os = model.add_opset_import();
  os->set_domain("");
  os->set_version(opset);

  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(g.info().graph_name.empty() ? "ferry" : g.info().graph_name);
  GraphWriter writer(deferred);
  FERRY_TRY(writer.write(g, graph, true, 0));
  if (writer.uses_ferry_domain) {
    auto* fos = model.add_opset_import();
    fos->set_domain(kFerryDomain);
    fos->set_version(kFerryDomainVersion);
  }
  return model;
}

size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, ++n;
  return n;
}

void put_varint(std::ostream& f, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) buf[n++] = char(uint8_t(v) | 0x80), v >>= 7;
  buf[n++] = char(v);
  f.write(buf, std::streamsize(n));
}

/// A length-delimited field's key: (field << 3) | wire type 2.
void put_key(std::ostream& f, int field) { put_varint(f, uint64_t(field) << 3 | 2); }

}  // namespace

Result<onnx::ModelProto> export_onnx_model(const Graph& g, const OnnxExportOptions& options) {
  return build_model(g, options, nullptr);
}

Status write_onnx_file(const Graph& g, const std::string& path, const OnnxExportOptions& options) {
  // The weights go from the tensors straight to the file: the ModelProto is built
  // without their raw_data, and the writer emits ModelProto.graph (field 7) and
  // each GraphProto.initializer (field 5) itself, appending TensorProto.raw_data
  // (field 9). Protobuf parsers accept fields in any order; the bytes parse to the
  // message export_onnx_model builds. (Copying BERT-base's 437 MB into the
  // message first was most of `ferry convert`'s time.)
  std::vector<const Tensor*> raw;
  FERRY_ASSIGN_OR_RETURN(onnx::ModelProto model, build_model(g, options, &raw));
  onnx::GraphProto graph;
  graph.Swap(model.mutable_graph());
  model.clear_graph();
  google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
  inits.Swap(graph.mutable_initializer());
  std::vector<uint64_t> init_sizes(size_t(inits.size()));
  uint64_t graph_size = graph.ByteSizeLong();
  for (int i = 0; i < inits.size(); ++i) {
    uint64_t n = inits[i].ByteSizeLong();
    if (const Tensor* t = raw[size_t(i)]) n += 1 + varint_size(t->nbytes()) + t->nbytes();
    init_sizes[size_t(i)] = n;
    graph_size += 1 + varint_size(n) + n;
  }
  const uint64_t bytes = model.ByteSizeLong() + 1 + varint_size(graph_size) + graph_size;
  if (bytes > uint64_t(INT_MAX))
    return unsupported("the model is " + std::to_string(bytes) +
                       " bytes, over the 2 GiB protobuf limit (writing external data is not supported yet)");
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return io_error("cannot open '" + path + "' for writing");
  bool ok = model.SerializeToOstream(&f);
  put_key(f, 7);
  put_varint(f, graph_size);
  ok = ok && graph.SerializeToOstream(&f);
  for (int i = 0; ok && i < inits.size(); ++i) {
    put_key(f, 5);
    put_varint(f, init_sizes[size_t(i)]);
    ok = inits[i].SerializeToOstream(&f);
    if (const Tensor* t = raw[size_t(i)]) {
      put_key(f, 9);
      put_varint(f, t->nbytes());
      f.write(reinterpret_cast<const char*>(t->raw()), std::streamsize(t->nbytes()));
    }
  }
  f.close();
  if (!ok || !f) return io_error("writing '" + path + "' failed");
  return Status::Ok();
}

}  // namespace ferry
