#include "backends/cpu/cpu_int8_requant.h"

#include <cmath>

namespace ferry {

std::optional<onednn::Int8Requant> per_tensor_quantize(const Node& q) {
  if (q.op() != Op::QuantizeLinear || q.num_inputs() < 2 || q.num_outputs() < 1 || !q.input(1)) return std::nullopt;
  onednn::Int8Requant r;
  r.dtype = q.output(0)->dtype();
  if (r.dtype != DType::u8 && r.dtype != DType::i8) return std::nullopt;
  const Value* s = q.input(1);
  const Value* z = q.num_inputs() > 2 ? q.input(2) : nullptr;
  if (!s->is_constant() || s->constant()->dtype() != DType::f32 || s->constant()->numel() != 1) return std::nullopt;
  if (z && (!z->is_constant() || z->constant()->dtype() != r.dtype || z->constant()->numel() != 1)) return std::nullopt;
  r.scale = s->constant()->data<float>()[0];
  if (!(r.scale > 0) || !std::isfinite(r.scale)) return std::nullopt;
  if (z) r.zero_point = r.dtype == DType::u8 ? int32_t(z->constant()->data<uint8_t>()[0])
                                             : int32_t(z->constant()->data<int8_t>()[0]);
  return r;
}

std::optional<onednn::Int8Requant> int8_requant_readers(const Graph& g, const Node& n) {
  const Value* y = n.output(0);
  if (!y || y->uses().empty() || g.is_graph_output(y)) return std::nullopt;
  for (size_t i = 1; i < n.num_outputs(); ++i)
    if (!n.output(i)->uses().empty() || g.is_graph_output(n.output(i))) return std::nullopt;
  std::optional<onednn::Int8Requant> first;
  for (const Use& u : y->uses()) {
    if (u.index != 0) return std::nullopt;
    const std::optional<onednn::Int8Requant> r = per_tensor_quantize(*u.node);
    if (!r || (first && !(*first == *r))) return std::nullopt;
    first = r;
  }
  return first;
}

}  // namespace ferry
