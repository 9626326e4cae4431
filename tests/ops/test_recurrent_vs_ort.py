"""RNN, GRU and LSTM through ferry against ONNX Runtime, on what the ONNX node
tests leave out: sequence_lens (forward, reverse, bidirectional, a zero length),
initial states, peepholes, clip, input_forget, linear_before_reset, activations
with alpha/beta taken from the attribute lists, omitted outputs, and layout=1.

Each case is a one-node opset-22 model run with `ferry run` (reference backend:
import -> optimize -> reference kernels) and with ONNX Runtime on the same
inputs. ONNX Runtime's CPU kernels support only layout=0, so a layout=1 case
runs ferry on the batch-first model and ORT on the layout-0 twin with the
inputs and outputs transposed. Outputs must agree within
|ferry - ort| <= 1e-4 * max(1, |ort|) (ORT evaluates in float32, ferry in double).
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("ferry_models_conftest", REPO / "tests" / "models" / "conftest.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)

INPUTS = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def make_inputs(op, T, B, I, H, dirs, seed, with_bias=True, lens=None, init=False, peep=False):
    rng = np.random.default_rng(seed)
    G = GATES[op]
    f = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    ins = {"X": 2 * f(T, B, I), "W": f(dirs, G * H, I), "R": f(dirs, G * H, H)}
    if with_bias:
        ins["B"] = f(dirs, 2 * G * H)
    if lens is not None:
        ins["sequence_lens"] = np.array(lens, np.int32)
    if init:
        ins["initial_h"] = f(dirs, B, H)
        if op == "LSTM":
            ins["initial_c"] = 2 * f(dirs, B, H)
    if peep:
        ins["P"] = f(dirs, 3 * H)
    return ins


def model(op, ins, attrs, outputs, constants=()):
    """`constants`: the inputs stored as initializers (the weights of an exported model)."""
    from onnx import TensorProto, helper, numpy_helper

    names = INPUTS[: max(INPUTS.index(k) for k in ins) + 1]
    graph_inputs = [helper.make_tensor_value_info(k, TensorProto.INT32 if k == "sequence_lens" else TensorProto.FLOAT,
                                                  list(v.shape)) for k, v in ins.items() if k not in constants]
    inits = [numpy_helper.from_array(v, k) for k, v in ins.items() if k in constants]
    node = helper.make_node(op, [n if n in ins else "" for n in names], [o or "" for o in outputs], **attrs)
    graph_outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs if o]
    return helper.make_model(helper.make_graph([node], "g", graph_inputs, graph_outputs, initializer=inits),
                             opset_imports=[helper.make_opsetid("", 22)])


def run_ort(m, ins):
    import onnxruntime as ort

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, ins)))


def run_ferry(m, ins, tmp_path, backend="reference"):
    import onnx

    binary = models.ferry_binary()
    if binary is None:
        models.unavailable("ferry binary not found (set FERRY_BIN)")
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    args = [str(binary), "run", str(path), "--backend", backend, "--output-dir", str(tmp_path / "out")]
    for name, arr in ins.items():
        np.save(tmp_path / f"{name}.npy", arr)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ferry run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return {o.name: np.load(tmp_path / "out" / f"{o.name}.npy") for o in m.graph.output}


def assert_close(got, want, name):
    assert got.shape == want.shape, f"{name}: shape {got.shape}, expected {want.shape}"
    err = np.abs(got.astype(np.float64) - want) / np.maximum(1.0, np.abs(want))
    assert err.max() <= 1e-4, f"{name}: worst relative error {err.max():.3g} at {np.unravel_index(err.argmax(), err.shape)}"


# (id, op, input spec, attributes, outputs)
CASES = [
    ("lstm_lens_forward", "LSTM", dict(T=5, B=3, I=4, H=3, dirs=1, seed=1, lens=[5, 2, 1], init=True, peep=True),
     dict(hidden_size=3), ["Y", "Y_h", "Y_c"]),
    ("lstm_lens_reverse", "LSTM", dict(T=5, B=3, I=4, H=3, dirs=1, seed=2, lens=[3, 5, 1], init=True, peep=True),
     dict(hidden_size=3, direction="reverse"), ["Y", "Y_h", "Y_c"]),
    ("lstm_lens_bidirectional_clip", "LSTM", dict(T=4, B=3, I=2, H=5, dirs=2, seed=3, lens=[4, 1, 3], init=True,
                                                  peep=True),
     dict(hidden_size=5, direction="bidirectional", clip=0.7), ["Y", "Y_h", "Y_c"]),
    ("lstm_zero_length", "LSTM", dict(T=3, B=3, I=2, H=2, dirs=2, seed=4, lens=[3, 0, 2], init=True),
     dict(hidden_size=2, direction="bidirectional"), ["Y", "Y_h", "Y_c"]),
    ("lstm_input_forget", "LSTM", dict(T=4, B=2, I=3, H=3, dirs=1, seed=5, init=True, peep=True),
     dict(hidden_size=3, input_forget=1), ["Y", "Y_h", "Y_c"]),
    ("lstm_activations", "LSTM", dict(T=4, B=2, I=3, H=2, dirs=2, seed=6, init=True),
     dict(hidden_size=2, direction="bidirectional",
          activations=["HardSigmoid", "LeakyRelu", "Softsign", "Sigmoid", "Elu", "ScaledTanh"],
          activation_alpha=[0.3, 0.2, 0.8, 1.5], activation_beta=[0.4, 0.7]), ["Y", "Y_h", "Y_c"]),
    ("lstm_only_y_h", "LSTM", dict(T=3, B=2, I=2, H=4, dirs=1, seed=7, with_bias=False),
     dict(hidden_size=4), ["", "Y_h"]),
    ("gru_lens_reverse", "GRU", dict(T=5, B=3, I=3, H=4, dirs=1, seed=8, lens=[2, 5, 4], init=True),
     dict(hidden_size=4, direction="reverse"), ["Y", "Y_h"]),
    ("gru_linear_before_reset_lens", "GRU", dict(T=5, B=3, I=3, H=4, dirs=2, seed=9, lens=[5, 3, 1], init=True),
     dict(hidden_size=4, direction="bidirectional", linear_before_reset=1), ["Y", "Y_h"]),
    ("gru_activations_clip", "GRU", dict(T=4, B=2, I=2, H=3, dirs=2, seed=10, init=True),
     dict(hidden_size=3, direction="bidirectional", clip=0.5, activations=["HardSigmoid", "Softplus", "Sigmoid", "Relu"],
          activation_alpha=[0.25], activation_beta=[0.45]), ["Y", "Y_h"]),
    ("rnn_relu_lens", "RNN", dict(T=4, B=3, I=3, H=2, dirs=1, seed=11, lens=[4, 2, 3], init=True),
     dict(hidden_size=2, activations=["Relu"]), ["Y", "Y_h"]),
    ("rnn_bidirectional_affine_thresholded", "RNN", dict(T=4, B=2, I=3, H=3, dirs=2, seed=12, lens=[1, 4]),
     dict(hidden_size=3, direction="bidirectional", activations=["Affine", "ThresholdedRelu"],
          activation_alpha=[0.5, 0.1], activation_beta=[0.2]), ["Y", "Y_h"]),
    ("rnn_reverse_clip_scaledtanh", "RNN", dict(T=3, B=2, I=2, H=2, dirs=1, seed=13, lens=[2, 3], init=True),
     dict(hidden_size=2, direction="reverse", clip=0.3, activations=["ScaledTanh"], activation_alpha=[2.0],
          activation_beta=[1.5]), ["Y", "Y_h"]),
]


@pytest.mark.parametrize("op,spec,attrs,outputs", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_against_onnxruntime(op, spec, attrs, outputs, tmp_path):
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        models.unavailable(f"onnx / onnxruntime not importable: {e}")
    ins = make_inputs(op, **spec)
    m = model(op, ins, attrs, outputs)
    want = run_ort(m, ins)
    got = run_ferry(m, ins, tmp_path)
    for name in want:
        assert_close(got[name], want[name], name)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_batch_first_layout(op, tmp_path):
    """layout=1 in ferry == layout=0 in ONNX Runtime with batch and time swapped."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        models.unavailable(f"onnx / onnxruntime not importable: {e}")
    outputs = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    attrs = dict(hidden_size=3, direction="bidirectional")
    ins = make_inputs(op, T=4, B=2, I=3, H=3, dirs=2, seed=20, lens=[4, 2], init=True)
    want = run_ort(model(op, ins, attrs, outputs), ins)
    batch_first = dict(ins)
    batch_first["X"] = np.ascontiguousarray(ins["X"].transpose(1, 0, 2))
    for k in ("initial_h", "initial_c"):
        if k in ins:
            batch_first[k] = np.ascontiguousarray(ins[k].transpose(1, 0, 2))
    got = run_ferry(model(op, batch_first, dict(attrs, layout=1), outputs), batch_first, tmp_path)
    assert_close(got["Y"], want["Y"].transpose(2, 0, 1, 3), "Y")
    for k in outputs[1:]:
        assert_close(got[k], want[k].transpose(1, 0, 2), k)


# LSTMs with their weights as initializers, as exporters write them: the cpu backend runs
# them on oneDNN's lstm_forward (tests/kernels/onednn_conv_nd_test.cc checks the step choice).
CPU_LSTM_CASES = [
    ("forward_state_peepholes", dict(T=6, B=3, I=4, H=5, dirs=1, seed=21, init=True, peep=True), dict(hidden_size=5)),
    ("reverse_state", dict(T=5, B=2, I=3, H=4, dirs=1, seed=22, init=True), dict(hidden_size=4, direction="reverse")),
    ("bidirectional_batch1", dict(T=7, B=1, I=6, H=8, dirs=2, seed=23, init=True, peep=True),
     dict(hidden_size=8, direction="bidirectional")),
    ("forward_no_state_no_bias", dict(T=4, B=1, I=3, H=16, dirs=1, seed=24, with_bias=False), dict(hidden_size=16)),
    ("full_length_lens", dict(T=4, B=2, I=3, H=4, dirs=1, seed=25, lens=[4, 4], init=True), dict(hidden_size=4)),
]


@pytest.mark.parametrize("spec,attrs", [pytest.param(*c[1:], id=c[0]) for c in CPU_LSTM_CASES])
def test_lstm_cpu_backend_against_onnxruntime(spec, attrs, tmp_path):
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        models.unavailable(f"onnx / onnxruntime not importable: {e}")
    ins = make_inputs("LSTM", **spec)
    outputs = ["Y", "Y_h", "Y_c"]
    constants = ("W", "R", "B", "P", "sequence_lens")
    m = model("LSTM", ins, attrs, outputs, constants=constants)
    feeds = {k: v for k, v in ins.items() if k not in constants}
    want = run_ort(m, feeds)
    got = run_ferry(m, feeds, tmp_path, backend="cpu")
    for name in want:
        assert_close(got[name], want[name], name)
