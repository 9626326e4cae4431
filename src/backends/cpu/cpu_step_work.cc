#include "backends/cpu/cpu_step_work.h"

namespace ferry {
namespace {

double count_of(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= double(d);
  return n;
}

}  // namespace

double step_flops(const Node& n, const std::vector<std::vector<int64_t>>& in_dims, const std::vector<int64_t>& out_dims) {
  const double out = count_of(out_dims);
  auto in = [&](size_t i) -> const std::vector<int64_t>& {
    static const std::vector<int64_t> kNone;
    return i < in_dims.size() ? in_dims[i] : kNone;
  };
  switch (n.op()) {
    case Op::MatMul:
    case Op::FusedMatMul:
    case Op::MatMulInteger:
      return in(0).empty() ? -1 : 2 * out * double(in(0).back());
    case Op::Gemm:
      return in(0).size() != 2 ? -1 : 2 * out * double(std::max(in(0)[0], in(0)[1]));
    case Op::Conv:
    case Op::FusedConv:
    case Op::ConvInteger: {
      const std::vector<int64_t>& w = in(1);
      return w.empty() || w[0] == 0 ? -1 : 2 * out * count_of(w) / double(w[0]);
    }
    case Op::ConvTranspose: {
      const std::vector<int64_t>& w = in(1);
      return w.empty() || w[0] == 0 ? -1 : 2 * count_of(in(0)) * count_of(w) / double(w[0]);  // W: [C_in, C_out/g, k...]
    }
    case Op::LSTM:
    case Op::QuantizedLSTM:
    case Op::GRU:
    case Op::RNN:
    case Op::Attention:
    case Op::Einsum:
    case Op::If:
    case Op::Loop:
    case Op::Scan:
      return -1;
    default:
      return out;
  }
}

}  // namespace ferry
