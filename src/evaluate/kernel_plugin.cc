#include "evaluate/kernel_plugin.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <optional>
#include <map>
#include <mutex>

#include "ops/op_context.h"
#include "ops/registry.h"

namespace ferry::evaluate {
namespace {

struct CodeMap {
  DType dtype;
  int32_t code;
};
constexpr CodeMap kCodes[] = {
    {DType::f32, FERRY_DTYPE_F32},   {DType::u8, FERRY_DTYPE_U8},     {DType::i8, FERRY_DTYPE_I8},
    {DType::u16, FERRY_DTYPE_U16},   {DType::i16, FERRY_DTYPE_I16},   {DType::i32, FERRY_DTYPE_I32},
    {DType::i64, FERRY_DTYPE_I64},   {DType::boolean, FERRY_DTYPE_BOOL}, {DType::f16, FERRY_DTYPE_F16},
    {DType::f64, FERRY_DTYPE_F64},   {DType::u32, FERRY_DTYPE_U32},   {DType::u64, FERRY_DTYPE_U64},
    {DType::bf16, FERRY_DTYPE_BF16},
};

constexpr size_t kMessageSize = 1024;

std::string dims_text(DType dtype, const int64_t* dims, int64_t rank) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (int64_t i = 0; i < rank; ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string status_name(int32_t code) {
  switch (code) {
    case FERRY_KERNEL_ERROR: return "FERRY_KERNEL_ERROR";
    case FERRY_KERNEL_UNSUPPORTED: return "FERRY_KERNEL_UNSUPPORTED";
    default: return "unknown status " + std::to_string(code);
  }
}

/// The plugin's message, NUL-terminated whatever it wrote.
std::string message_of(char* buf) {
  buf[kMessageSize - 1] = '\0';
  return buf[0] ? std::string(buf) : std::string("(no message)");
}

KernelPlugin* g_installed = nullptr;  // the registry holds plain function pointers: one plugin per process
std::atomic<int64_t> g_calls{0};

}  // namespace

std::optional<DType> dtype_from_plugin_code(int32_t code) {
  for (const CodeMap& m : kCodes)
    if (m.code == code) return m.dtype;
  return std::nullopt;
}

int32_t plugin_code_of(DType dtype) {
  for (const CodeMap& m : kCodes)
    if (m.dtype == dtype) return m.code;
  return FERRY_DTYPE_UNDEFINED;
}

struct KernelPlugin::NodeStates {
  struct State {
    void* state = nullptr;
    std::vector<std::vector<int64_t>> checked;  ///< input-shape signatures infer() agreed on
  };
  std::mutex mu;
  std::map<const Node*, State> by_node;
};

/// The KernelFn the registry calls for the installed plugin.
struct PluginAdapter {
  static Status run(KernelContext& ctx) {
    KernelPlugin* p = g_installed;
    if (!p) return internal_error("kernel plugin adapter called with no plugin installed");
    const Node& node = ctx.node();
    const std::string who = "kernel plugin '" + p->name_ + "' (" + p->path_ + ")";
    const ferry_kernel_v1& t = *p->table_;

    std::lock_guard<std::mutex> lock(p->states_->mu);
    auto [it, fresh] = p->states_->by_node.try_emplace(&node);
    KernelPlugin::NodeStates::State& st = it->second;
    char msg[kMessageSize];
    if (fresh) {
      FERRY_TRY(create(*p, node, &st.state, msg).with_context(who));
    }

    std::vector<ferry_tensor> ins(ctx.num_inputs());
    std::vector<int64_t> signature;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i)) {
        ins[i] = {FERRY_DTYPE_UNDEFINED, 0, nullptr, nullptr};
        signature.push_back(-1);
        continue;
      }
      const Tensor& x = ctx.input(i);
      if (x.rank() > FERRY_KERNEL_MAX_RANK)
        return unsupported(who + ": input " + std::to_string(i) + " of node " + node.describe() + " has rank " +
                           std::to_string(x.rank()) + ", more than FERRY_KERNEL_MAX_RANK");
      ins[i] = {plugin_code_of(x.dtype()), int32_t(x.rank()), x.dims().data(), const_cast<uint8_t*>(x.raw())};
      signature.push_back(int64_t(x.dtype()));
      signature.insert(signature.end(), x.dims().begin(), x.dims().end());
      signature.push_back(-2);
    }
    std::vector<ferry_tensor> outs(ctx.num_outputs());
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
      Tensor& y = ctx.output(i);
      if (!y.defined())
        return unsupported(who + ": output " + std::to_string(i) + " of node " + node.describe() +
                           " has no static shape before the run; plugins need ferry to allocate every output");
      outs[i] = {plugin_code_of(y.dtype()), int32_t(y.rank()), y.dims().data(), y.raw()};
    }

    if (t.infer) {
      bool known = false;
      for (const auto& s : st.checked) known |= s == signature;
      if (!known) {
        std::vector<ferry_tensor_shape> shapes(outs.size());
        for (ferry_tensor_shape& s : shapes) s = {FERRY_DTYPE_UNDEFINED, -1, {}};
        msg[0] = '\0';
        int32_t rc = t.infer(st.state, ins.data(), int32_t(ins.size()), shapes.data(), int32_t(shapes.size()), msg,
                             kMessageSize);
        if (rc != FERRY_KERNEL_OK)
          return invalid_argument(who + ": infer() on node " + node.describe() + " returned " + status_name(rc) +
                                  ": " + message_of(msg));
        for (size_t i = 0; i < outs.size(); ++i) {
          const Tensor& y = ctx.output(i);
          const ferry_tensor_shape& s = shapes[i];
          std::optional<DType> dt = dtype_from_plugin_code(s.dtype);
          bool same = dt && *dt == y.dtype() && s.rank == y.rank();
          for (int64_t d = 0; same && d < y.rank(); ++d) same = s.dims[d] == y.dim(d);
          if (!same) {
            std::string got = s.rank < 0 || s.rank > FERRY_KERNEL_MAX_RANK
                                  ? "rank " + std::to_string(s.rank)
                                  : dims_text(dt.value_or(DType::undefined), s.dims, s.rank);
            return invalid_argument(who + ": wrong output shape: infer() gives output " + std::to_string(i) +
                                    " of node " + node.describe() + " as " + got + ", ferry's shape inference " +
                                    dims_text(y.dtype(), y.dims().data(), y.rank()));
          }
        }
        st.checked.push_back(signature);
      }
    }

    msg[0] = '\0';
    ++g_calls;
    int32_t rc = t.run(st.state, ins.data(), int32_t(ins.size()), outs.data(), int32_t(outs.size()), msg,
                       kMessageSize);
    if (rc != FERRY_KERNEL_OK)
      return invalid_argument(who + ": run() on node " + node.describe() + " returned " + status_name(rc) + ": " +
                              message_of(msg));
    return Status::Ok();
  }

  static Status create(const KernelPlugin& p, const Node& node, void** state, char* msg) {
    // The attributes set on the node, then the schema defaults of the rest.
    std::vector<std::pair<std::string, const AttrValue*>> values;
    for (const auto& [name, v] : node.attrs().all()) values.emplace_back(name, &v);
    for (const AttrSpec& spec : op_schema(node.op()).attrs)
      if (!node.attrs().has(spec.name) && spec.has_default) values.emplace_back(spec.name, &spec.default_value);
    std::vector<ferry_attr> attrs;
    for (const auto& [name, v] : values) {
      ferry_attr a{};
      a.name = name.c_str();
      if (auto* i = std::get_if<int64_t>(v)) {
        a.kind = FERRY_ATTR_INT, a.i = *i;
      } else if (auto* f = std::get_if<double>(v)) {
        a.kind = FERRY_ATTR_FLOAT, a.f = *f;
      } else if (auto* s = std::get_if<std::string>(v)) {
        a.kind = FERRY_ATTR_STRING, a.s = s->c_str();
      } else if (auto* is = std::get_if<std::vector<int64_t>>(v)) {
        a.kind = FERRY_ATTR_INTS, a.ints = is->data(), a.count = int64_t(is->size());
      } else if (auto* fs = std::get_if<std::vector<double>>(v)) {
        a.kind = FERRY_ATTR_FLOATS, a.floats = fs->data(), a.count = int64_t(fs->size());
      } else {
        continue;  // tensors and string lists are not part of ABI v1
      }
      attrs.push_back(a);
    }
    const std::string op = op_name(node.op());
    ferry_kernel_node n{node.name().c_str(), op.c_str(), int32_t(node.num_inputs()), int32_t(node.num_outputs()),
                        attrs.data(), int32_t(attrs.size())};
    msg[0] = '\0';
    int32_t rc = p.table_->create(&n, state, msg, kMessageSize);
    if (rc != FERRY_KERNEL_OK)
      return invalid_argument("create() for node " + node.describe() + " returned " + status_name(rc) + ": " +
                              message_of(msg));
    return Status::Ok();
  }
};

Result<std::unique_ptr<KernelPlugin>> KernelPlugin::load(const std::string& path) {
  auto fail = [&](const std::string& why) { return invalid_argument("kernel plugin " + path + ": " + why); };
  // A bare file name would be searched on the library path; the caller means this file.
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    return fail(std::string("cannot load the shared library: ") + (e ? e : "unknown dlopen error"));
  }
  auto entry = reinterpret_cast<ferry_kernel_entry_fn>(dlsym(handle, FERRY_KERNEL_ENTRY_SYMBOL));
  if (!entry)
    return fail("exports no function '" FERRY_KERNEL_ENTRY_SYMBOL
                "' (declare it extern \"C\" FERRY_KERNEL_EXPORT, see include/ferry/kernel_plugin.h)");
  const ferry_kernel_v1* t = entry(FERRY_KERNEL_ABI_VERSION);
  if (!t) return fail(FERRY_KERNEL_ENTRY_SYMBOL "() returned NULL (the plugin refused ABI version " +
                      std::to_string(FERRY_KERNEL_ABI_VERSION) + ")");
  if (t->abi_version != FERRY_KERNEL_ABI_VERSION)
    return fail("built for kernel plugin ABI version " + std::to_string(t->abi_version) + "; this ferry loads version " +
                std::to_string(FERRY_KERNEL_ABI_VERSION) + " (rebuild it against this ferry's ferry/kernel_plugin.h)");
  if (t->struct_size < sizeof(ferry_kernel_v1))
    return fail("struct_size " + std::to_string(t->struct_size) + " is smaller than sizeof(ferry_kernel_v1) = " +
                std::to_string(sizeof(ferry_kernel_v1)));
  if (!t->name || !*t->name) return fail("has no name");
  if (!t->op) return fail("names no op");
  std::optional<Op> op = op_from_name(t->op);
  if (!op) return fail(std::string("op '") + t->op + "' is not a ferry op (see docs/ferry_ops.md and src/ir/ops.def)");
  if (!t->create || !t->run || !t->destroy) return fail("create, run and destroy must all be set");
  if (!t->dtypes || t->dtypes[0] == FERRY_DTYPE_UNDEFINED) return fail("lists no dtypes");

  auto p = std::unique_ptr<KernelPlugin>(new KernelPlugin());
  for (const int32_t* d = t->dtypes; *d != FERRY_DTYPE_UNDEFINED; ++d) {
    if (d - t->dtypes >= 32) return fail("dtypes is not terminated by FERRY_DTYPE_UNDEFINED within 32 entries");
    std::optional<DType> dt = dtype_from_plugin_code(*d);
    if (!dt) return fail("dtype code " + std::to_string(*d) + " is not a ferry_kernel_dtype");
    p->dtypes_.push_back(*dt);
  }
  p->path_ = path;
  p->name_ = t->name;
  p->op_ = *op;
  p->handle_ = handle;
  p->table_ = t;
  p->states_ = std::make_unique<NodeStates>();
  return p;
}

KernelPlugin::~KernelPlugin() {
  destroy_states();
  if (g_installed == this) {
    unregister_kernel("plugin:" + name_);  // ferry's own kernels run that op again
    g_installed = nullptr;
  }
  // Never dlclose: the kernel registry keeps pointing at the adapter, and a
  // plugin's own threads or atexit handlers may still live in the library.
}

Status KernelPlugin::install() {
  if (g_installed && g_installed != this)
    return invalid_argument("kernel plugin " + path_ + ": another plugin (" + g_installed->path_ +
                            ") is installed in this process already");
  if (g_installed == this) return Status::Ok();
  g_installed = this;
  for (DType dt : dtypes_) {
    KernelEntry e{op_, dt, Isa::reference, "", &PluginAdapter::run, false, true};
    static std::deque<std::string> names;  // the registry keeps the name pointer (deque: stable)
    names.push_back("plugin:" + name_);
    e.name = names.back().c_str();
    register_kernel(e);
  }
  return Status::Ok();
}

int64_t KernelPlugin::calls() const { return g_installed == this ? g_calls.load() : 0; }

void KernelPlugin::destroy_states() {
  if (!states_) return;
  std::lock_guard<std::mutex> lock(states_->mu);
  for (auto& [node, st] : states_->by_node)
    if (st.state) table_->destroy(st.state);
  states_->by_node.clear();
}

}  // namespace ferry::evaluate
