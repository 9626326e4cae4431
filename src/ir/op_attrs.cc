#include "ir/op_attrs.h"

#include "ir/graph.h"

namespace ferry {
namespace {

template <class T>
const T& get(const AttrValue& v, const char* name) {
  const T* p = std::get_if<T>(&v);
  FERRY_CHECK(p != nullptr, std::string("attribute '") + name + "' is " + attr_kind_name(attr_kind(v)) +
                                ", not the kind ops.def declares (the verifier checks this)");
  return *p;
}

template <class T>
void read(const AttrMap& m, const char* name, T& out) {
  if (const AttrValue* v = m.find(name)) out = get<T>(*v, name);
}

template <class T>
void read(const AttrMap& m, const char* name, std::optional<T>& out) {
  if (const AttrValue* v = m.find(name)) out = get<T>(*v, name);
}

}  // namespace

#define ATTR(name, kind, def) read(m, #name, a.name);
#define REQ(name, kind) read(m, #name, a.name);
#define OPT(name, kind) read(m, #name, a.name);
#define FERRY_OP(Name, min_in, max_in, min_out, max_out, sink, export_to, flops, ...) \
  Name##Attrs Name##Attrs::parse(const AttrMap& m) {                                 \
    Name##Attrs a;                                                                   \
    __VA_ARGS__                                                                      \
    return a;                                                                        \
  }
#include "ir/ops.def"
#undef FERRY_OP
#undef ATTR
#undef REQ
#undef OPT

namespace {
template <class A>
EpilogueAttrs epilogue_of(const A& a) {
  return {a.activation, a.alpha, a.beta};
}
}  // namespace

EpilogueAttrs epilogue_attrs(const Node& n) {
  switch (n.op()) {
    case Op::FusedConv: return epilogue_of(n.attrs<FusedConvAttrs>());
    case Op::FusedConvTranspose: return epilogue_of(n.attrs<FusedConvTransposeAttrs>());
    case Op::FusedMul: return epilogue_of(n.attrs<FusedMulAttrs>());
    default: return epilogue_of(n.attrs<FusedMatMulAttrs>());  // checks the op
  }
}

}  // namespace ferry
