// RNN, GRU, LSTM: hand-checked recurrences (Affine activations keep the
// arithmetic exact) for sequence_lens with reverse direction, layout=1, zero-length
// sequences, clip, GRU's linear_before_reset, LSTM's peepholes and input_forget;
// symbolic shape inference; validation errors. tests/ops/test_recurrent_vs_ort.py
// compares the same kernels with ONNX Runtime over random weights.
#include "linalg_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrValue strs(std::vector<std::string> v) { return v; }
AttrValue floats(std::vector<double> v) { return v; }

/// Affine(x) = x for every function of the cell (per direction).
AttrMap identity(int funcs, std::initializer_list<std::pair<const char*, AttrValue>> more = {}) {
  AttrMap a = attrs(more);
  a.set("activations", strs(std::vector<std::string>(size_t(funcs), "Affine")));
  a.set("activation_alpha", floats(std::vector<double>(size_t(funcs), 1.0)));
  a.set("activation_beta", floats(std::vector<double>(size_t(funcs), 0.0)));
  return a;
}

TEST(Rnn, SequenceLensReverse) {
  // h = x + 0.5 h, run backwards over the first len steps of each batch entry:
  //   b0 (len 3): x = 1, 2, 3 -> h(t2) = 3, h(t1) = 2 + 1.5 = 3.5, h(t0) = 1 + 1.75 = 2.75
  //   b1 (len 2): x = 10, 20  -> h(t1) = 20, h(t0) = 10 + 10 = 20; t2 is padding (0)
  Tensor x = f32({3, 2, 1}, {1, 10, 2, 20, 3, 30});
  auto out = run_op(Op::RNN, {x, f32({1, 1, 1}, {1}), f32({1, 1, 1}, {0.5}), Tensor(), i32({2}, {3, 2})},
                    identity(1, {{"direction", std::string("reverse")}}), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {3, 1, 2, 1});
  expect_near((*out)[0], {2.75, 20, 3.5, 20, 3, 0});
  expect_type((*out)[1], DType::f32, {1, 2, 1});
  expect_near((*out)[1], {2.75, 20});
}

TEST(Rnn, BatchFirstLayout) {
  // The case above with layout=1: X [B, T, I], Y [B, T, D, H], Y_h [B, D, H].
  Tensor x = f32({2, 3, 1}, {1, 2, 3, 10, 20, 30});
  auto out = run_op(Op::RNN, {x, f32({1, 1, 1}, {1}), f32({1, 1, 1}, {0.5}), Tensor(), i32({2}, {3, 2})},
                    identity(1, {{"direction", std::string("reverse")}, {"layout", int64_t(1)}}), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3, 1, 1});
  expect_near((*out)[0], {2.75, 3.5, 3, 20, 20, 0});
  expect_type((*out)[1], DType::f32, {2, 1, 1});
  expect_near((*out)[1], {2.75, 20});
}

TEST(Rnn, ZeroLengthSequenceGivesZeroState) {
  // As ONNX Runtime: a zero-length entry leaves Y_h at 0, not at initial_h.
  auto out = run_op(Op::RNN,
                    {f32({1, 2, 1}, {1, 10}), f32({1, 1, 1}, {1}), f32({1, 1, 1}, {0.5}), Tensor(), i32({2}, {0, 1}),
                     f32({1, 2, 1}, {5, 5})},
                    identity(1), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 12.5});
  expect_near((*out)[1], {0, 12.5});
}

TEST(Rnn, ClipBoundsTheActivationInput) {
  // h = clip(x + h, 1.5): 1, clip(3) = 1.5, clip(4.5) = 1.5.
  auto out = run_op(Op::RNN, {f32({3, 1, 1}, {1, 2, 3}), f32({1, 1, 1}, {1}), f32({1, 1, 1}, {1})},
                    identity(1, {{"clip", 1.5}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 1.5, 1.5});
}

TEST(Gru, LinearBeforeReset) {
  // z = 0.5, r = 0.5 (biases only), n from Wn = 1, Rn = 2, Rbn = 1:
  //   lbr 0: n = x + Rn (r h) + Rbn = x + h + 1     -> h' = 0.5 x + h + 0.5:  1, 2.5
  //   lbr 1: n = x + r (Rn h + Rbn) = x + h + 0.5   -> h' = 0.5 x + h + 0.25: 0.75, 2
  Tensor x = f32({2, 1, 1}, {1, 2});
  Tensor w = f32({1, 3, 1}, {0, 0, 1}), r = f32({1, 3, 1}, {0, 0, 2}), b = f32({1, 6}, {0.5, 0.5, 0, 0, 0, 1});
  for (int64_t lbr : {0, 1}) {
    auto out = run_op(Op::GRU, {x, w, r, b}, identity(2, {{"linear_before_reset", lbr}}), 2);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_near((*out)[0], lbr ? std::vector<double>{0.75, 2} : std::vector<double>{1, 2.5});
    expect_near((*out)[1], {lbr ? 2.0 : 2.5});
  }
}

TEST(Lstm, PeepholeAndInputForget) {
  // i = 0.5, f = 0.25 (or 1 - i = 0.5 with input_forget), c~ = x, o = 1 + 0.5 C (peephole
  // on the new cell), h = o C.  x = 2, 4:
  //   forget 0.25: C = 1, 2.25;  h = 1.5 * 1 = 1.5, 2.125 * 2.25 = 4.78125
  //   forget 0.5:  C = 1, 2.5;   h = 1.5, 2.25 * 2.5 = 5.625
  Tensor x = f32({2, 1, 1}, {2, 4});
  Tensor w = f32({1, 4, 1}, {0, 0, 0, 1}), r = f32({1, 4, 1}, {0, 0, 0, 0});
  Tensor b = f32({1, 8}, {0.5, 1, 0.25, 0, 0, 0, 0, 0}), p = f32({1, 3}, {0, 0.5, 0});
  for (int64_t input_forget : {0, 1}) {
    auto out = run_op(Op::LSTM, {x, w, r, b, Tensor(), Tensor(), Tensor(), p},
                      identity(3, {{"input_forget", input_forget}}), 3);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_near((*out)[0], {1.5, input_forget ? 5.625 : 4.78125});
    expect_near((*out)[2], {input_forget ? 2.5 : 2.25});
  }
}

TEST(Lstm, DefaultActivations) {
  // One step from zero state, all weights zero but the cell bias: i = f = o = sigmoid(0) = 0.5,
  // c~ = tanh(1), C = 0.5 tanh(1), h = 0.5 tanh(C).
  Tensor b(f32({1, 8}, {0, 0, 0, 1, 0, 0, 0, 0}));
  auto out = run_op(Op::LSTM, {f32({1, 1, 1}, {3}), f32({1, 4, 1}, {0, 0, 0, 0}), f32({1, 4, 1}, {0, 0, 0, 0}), b},
                    {}, 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const double c = 0.5 * std::tanh(1.0);
  expect_near((*out)[0], {0.5 * std::tanh(c)});
  expect_near((*out)[2], {c});
}

TEST(Recurrent, InfersSymbolicShapes) {
  AttrMap a = attrs({{"hidden_size", int64_t(3)}, {"direction", std::string("bidirectional")}});
  auto out = infer_op(Op::LSTM, {{DType::f32, shape_of({"S", "N", 4})}, {DType::f32, shape_of({2, 12, 4})},
                                 {DType::f32, shape_of({2, 12, 3})}},
                      a, 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"S", 2, "N", 3}));
  EXPECT_EQ((*out)[1].shape, shape_of({2, "N", 3}));
  EXPECT_EQ((*out)[2].shape, shape_of({2, "N", 3}));

  a.set("layout", int64_t(1));
  auto bf = infer_op(Op::GRU, {{DType::f16, shape_of({"N", "S", 4})}, {DType::f16, shape_of({2, 9, 4})},
                               {DType::f16, Shape::unknown_rank()}},
                     a, 2);
  ASSERT_TRUE(bf.ok()) << bf.status().to_string();
  EXPECT_EQ((*bf)[0].dtype, DType::f16);
  EXPECT_EQ((*bf)[0].shape, shape_of({"N", "S", 2, 3}));
  EXPECT_EQ((*bf)[1].shape, shape_of({"N", 2, 3}));

  // No hidden_size and R of unknown shape: H unknown.
  auto unk = infer_op(Op::RNN, {{DType::f32, shape_of({5, 2, 4})}, {DType::f32, Shape::unknown_rank()},
                                {DType::f32, Shape::unknown_rank()}});
  ASSERT_TRUE(unk.ok()) << unk.status().to_string();
  EXPECT_EQ((*unk)[0].shape, shape_of({5, 1, 2, "?"}));
}

TEST(Recurrent, Errors) {
  const std::vector<InputInfo> rnn = {{DType::f32, shape_of({5, 2, 4})}, {DType::f32, shape_of({1, 3, 4})},
                                      {DType::f32, shape_of({1, 3, 3})}};
  expect_error(infer_op(Op::RNN, rnn, attrs({{"direction", std::string("sideways")}})),
               "direction must be forward, reverse or bidirectional");
  expect_error(infer_op(Op::RNN, rnn, attrs({{"direction", std::string("bidirectional")}})), "W has shape [1,3,4]");
  expect_error(infer_op(Op::RNN, rnn, attrs({{"hidden_size", int64_t(4)}})), "W has shape [1,3,4], expected [1,4,4]");
  expect_error(infer_op(Op::RNN, rnn, attrs({{"activations", strs({"Gelu"})}})), "unknown activation 'Gelu'");
  expect_error(infer_op(Op::RNN, rnn, attrs({{"activations", strs({"Affine"})}})),
               "activation Affine needs a value in activation_alpha");
  expect_error(infer_op(Op::LSTM,
                        {{DType::f32, shape_of({5, 2, 4})}, {DType::f32, shape_of({1, 12, 4})},
                         {DType::f32, shape_of({1, 12, 3})}},
                        attrs({{"activations", strs({"Sigmoid", "Tanh"})}})),
               "activations has 2 names; LSTM with 1 direction(s) needs 3");
  expect_error(infer_op(Op::GRU, {{DType::i32, shape_of({5, 2, 4})}, {DType::i32, shape_of({1, 9, 4})},
                                  {DType::i32, shape_of({1, 9, 3})}}),
               "X has dtype i32");
  auto bad_len = run_op(Op::RNN, {f32({1, 2, 1}, {1, 2}), f32({1, 1, 1}, {1}), f32({1, 1, 1}, {1}), Tensor(),
                                  i32({2}, {1, 2})});
  expect_error(bad_len, "sequence_lens[1] = 2 is outside [0, 1]");
}

}  // namespace
}  // namespace ferry
