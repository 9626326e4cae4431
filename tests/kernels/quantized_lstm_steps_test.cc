// QuantizedLSTM (ONNX Runtime's DynamicQuantizeLSTM, ops/quantized_lstm.cc) on the CPU
// backend's int8 step (native/lstm_int8.h) against the reference interpreter, over a
// sweep: directions, hidden sizes around the 16- and 64-column tiles, batch 1 and > 1,
// sequence_lens, initial states, peepholes, clip, input_forget, int8 and uint8 weights
// (zero points 0, 128, 77), per-direction and per-column scales, h quantized per row or
// per batch; the VNNI sums (AVX512 ISA, where the CPU has AVX512_VNNI) and the AVX2
// vpmaddwd sums (AVX2 ISA). The integer sums, the quantization and the f32 epilogue
// round as the reference; the cell's SIMD sigmoid / tanh differ by a few ulp, which can
// move one h code of a later step: measured max |kernel - reference| 9.5e-7 over the
// sweep (both sums), checked at 1e-5; a weight zero point off by one fails it (~1e-3).
#include <gtest/gtest.h>

#include <random>

#include "backends/cpu/native/lstm_int8.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct QlstmCase {
  int64_t T, N, I, H;
  std::string direction;
  bool u8 = false, per_column = false, bias = true, states = false, peepholes = false;
  std::string extra = "";  // "lens", "clip", "input_forget", "row_quant"
  size_t outputs = 3;
};

std::string qlstm_label(const QlstmCase& c) {
  return "QuantizedLSTM " + c.direction + " T" + std::to_string(c.T) + " N" + std::to_string(c.N) + " I" +
         std::to_string(c.I) + " H" + std::to_string(c.H) + (c.u8 ? " u8" : " s8") +
         (c.per_column ? " per-column" : " per-direction") + (c.bias ? " B" : "") + (c.states ? " h0 c0" : "") +
         (c.peepholes ? " P" : "") + (c.extra.empty() ? "" : " with " + c.extra) + " outputs " +
         std::to_string(c.outputs);
}

/// Codes [D, K, G]: int8 in [-127, 127] or uint8 in [0, 255].
Tensor qlstm_codes(bool u8, int64_t D, int64_t K, int64_t G, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor t = Tensor::empty(u8 ? DType::u8 : DType::i8, {D, K, G});
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (u8) t.data<uint8_t>()[i] = uint8_t(rng() % 256);
    else t.data<int8_t>()[i] = int8_t(int(rng() % 255) - 127);
  }
  return t;
}

/// Scale [D] or [D, G] near `s`, zero point of the codes' type (u8: 128 for d = 0, 77 for d = 1).
std::pair<Tensor, Tensor> qlstm_quant(const QlstmCase& c, int64_t D, int64_t G, float s, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<int64_t> dims = c.per_column ? std::vector<int64_t>{D, G} : std::vector<int64_t>{D};
  Tensor scale = Tensor::empty(DType::f32, dims), zp = Tensor::empty(c.u8 ? DType::u8 : DType::i8, dims);
  const int64_t per = scale.numel() / D;
  for (int64_t i = 0; i < scale.numel(); ++i) {
    scale.data<float>()[i] = s * (0.5f + float(rng() % 1000) / 1000.f);
    if (c.u8) zp.data<uint8_t>()[i] = i / per == 0 ? 128 : 77;
    else zp.data<int8_t>()[i] = 0;
  }
  return {scale, zp};
}

double qlstm_max_diff = 0;

void check_qlstm(const QlstmCase& c, Isa isa, const std::string& kernel, uint32_t seed) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, G = 4 * c.H;
  Tensor x = randn({c.T, c.N, c.I}, seed);
  Tensor w = qlstm_codes(c.u8, D, c.I, G, seed + 1), r = qlstm_codes(c.u8, D, c.H, G, seed + 2);
  auto [ws, wz] = qlstm_quant(c, D, G, 1.5f / (127.f * std::sqrt(float(c.I))), seed + 3);
  auto [rs, rz] = qlstm_quant(c, D, G, 1.5f / (127.f * std::sqrt(float(c.H))), seed + 4);
  Tensor b = randn({D, 8 * c.H}, seed + 5), p = randn({D, 3 * c.H}, seed + 6);
  Tensor h0 = randn({D, c.N, c.H}, seed + 7), c0 = randn({D, c.N, c.H}, seed + 8);
  for (Tensor* t : {&b, &p})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] *= 0.3f;
  std::vector<int32_t> lens(size_t(c.N), int32_t(c.T));
  const int32_t pattern[4] = {int32_t(c.T), int32_t(std::max<int64_t>(c.T - 1, 0)), 0, 1};
  for (size_t n = 0; n < lens.size(); ++n) lens[n] = pattern[n % 4];
  std::map<std::string, Tensor> feeds{{"x", x}};
  if (c.states) feeds["h0"] = h0, feeds["c0"] = c0;
  auto build = [&](Graph& g) {
    std::vector<Value*> in{g.add_input("x", DType::f32, x.shape()), g.add_constant("w", w), g.add_constant("r", r),
                           c.bias ? g.add_constant("b", b) : nullptr, nullptr, nullptr, nullptr, nullptr,
                           g.add_constant("ws", ws), g.add_constant("wz", wz), g.add_constant("rs", rs),
                           g.add_constant("rz", rz)};
    if (c.extra == "lens") in[4] = g.add_constant("lens", Tensor::from_vector<int32_t>(lens, {c.N}));
    if (c.states) in[5] = g.add_input("h0", DType::f32, h0.shape()), in[6] = g.add_input("c0", DType::f32, c0.shape());
    if (c.peepholes) in[7] = g.add_constant("p", p);
    AttrMap a = attrs({{"hidden_size", c.H}, {"direction", c.direction}});
    if (c.extra == "clip") a.set("clip", 0.5);
    if (c.extra == "input_forget") a.set("input_forget", int64_t(1));
    if (c.extra == "row_quant") a.set("h_quant_rows", int64_t(1));
    Node* n = g.add_node(Op::QuantizedLSTM, in, c.outputs, a, "qlstm");
    std::vector<Value*> outs;
    for (size_t i = 0; i < c.outputs; ++i) outs.push_back(n->output(i));
    g.set_outputs(outs);
  };
  const std::string label = qlstm_label(c) + " isa " + isa_name(isa);
  SessionRun run;
  SessionOptions o;
  o.threads = 2;  // the two directions on two threads
  o.isa = isa;
  ASSERT_TRUE(run_session(build, feeds, o, &run, 2)) << label;
  auto steps = run.steps_of("QuantizedLSTM");
  ASSERT_EQ(steps.size(), 1u) << label << run.plan_text;
  EXPECT_EQ(steps[0]->kernel.rfind(kernel, 0), 0u) << label << run.plan_text;
  EXPECT_TRUE(outputs_close(run, 1e-5)) << label;
  for (size_t i = 0; i < run.got.size() && i < run.want.size(); ++i)
    for (int64_t k = 0; k < run.got[i].numel(); ++k)
      qlstm_max_diff = std::max(qlstm_max_diff, std::fabs(run.got[i].get_double(k) - run.want[i].get_double(k)));
}

std::vector<QlstmCase> qlstm_sweep() {
  std::vector<QlstmCase> cases = {
      {22, 1, 512, 512, "bidirectional"},  // ddddocr's LSTM
      {9, 1, 16, 12, "forward", false, false, true, true},
      {7, 3, 5, 8, "reverse", true, true, true, true},
      {6, 2, 12, 8, "bidirectional", false, true, true, true, true},
      {5, 1, 6, 4, "bidirectional", true, false, false, false, false, "", 1},
      {6, 4, 6, 5, "forward", false, false, true, true, false, "lens"},
      {6, 4, 6, 5, "bidirectional", true, true, true, true, true, "lens"},
      {6, 5, 7, 9, "reverse", false, true, true, false, false, "lens"},
      {5, 2, 6, 4, "forward", false, false, true, false, false, "clip"},
      {5, 2, 6, 4, "bidirectional", true, false, true, true, false, "input_forget"},
      {6, 3, 10, 12, "bidirectional", false, true, true, true, false, "row_quant"},
      {6, 1, 7, 9, "forward", true, true, true, true, false, "", 2},
  };
  // Hidden and input sizes around the 16 / 64 column tiles and the 4-byte k groups.
  for (int64_t H : {1, 13, 16, 17, 63, 65, 130})
    for (int64_t N : {1, 3})
      cases.push_back({5, N, H + 2, H, H % 2 ? "bidirectional" : "reverse", H % 3 == 0, H % 2 == 1, true, N == 3,
                       H % 4 == 1});
  return cases;
}

TEST(QuantizedLstmSteps, VnniSumsMatchTheReference) {
  if (host_isa() < Isa::avx512 || !lstm_int8_host_has_vnni512()) GTEST_SKIP() << "needs AVX512_VNNI";
  uint32_t seed = 5100;
  for (const QlstmCase& c : qlstm_sweep()) check_qlstm(c, Isa::avx512, "lstm_int8_", seed += 10);
  std::printf("QuantizedLSTM VNNI vs reference: max |diff| %.3g\n", qlstm_max_diff);
}

TEST(QuantizedLstmSteps, Avx2MaddSumsMatchTheReference) {
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "the int8 LSTM step's cell needs AVX2";
  uint32_t seed = 6100;
  for (const QlstmCase& c : qlstm_sweep()) check_qlstm(c, Isa::avx2, "lstm_int8_", seed += 10);
  std::printf("QuantizedLSTM AVX2 madd sums vs reference: max |diff| %.3g\n", qlstm_max_diff);
}

TEST(QuantizedLstmSteps, TheStepNamesItsSums) {
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "the int8 LSTM step's cell needs AVX2";
  const QlstmCase c{4, 1, 8, 8, "forward"};
  check_qlstm(c, Isa::avx2, "lstm_int8_forward__avx2_madd16", 7100);
  if (host_isa() >= Isa::avx512 && lstm_int8_host_has_vnni512())
    check_qlstm(c, Isa::avx512, "lstm_int8_forward__avx512_vnni", 7200);
}

}  // namespace
}  // namespace ferry::testing
