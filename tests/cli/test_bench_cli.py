"""`ferry bench`, `ferry run --backend` and `ferry inspect --memory`, end to end.

Reuses the small conv model and fixtures of test_cli.py. No timing is asserted
(speed lives in bench/); only the shape of the output and its consistency.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from test_cli import conv_model, ferry, ferry_bin, ort_run  # noqa: F401  (pytest fixtures)


def test_bench_json_has_the_documented_fields(ferry, tmp_path):
    model = conv_model(tmp_path / "conv.onnx")
    p = ferry("bench", model, "--json", "--iters", "3", "--warmup", "1", "--threads", "1", "--batch", "2",
              check_rc=0)
    j = json.loads(p.stdout)
    lat = j["latency_ms"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"]
    assert j["batch"] == 2 and j["threads"] == 1 and j["iters"] == 3
    assert j["throughput_per_s"] > 0 and j["peak_rss_mb"] > 0
    assert j["steps"] >= 3


def test_bench_profile_writes_a_chrome_trace_with_one_event_per_step(ferry, tmp_path):
    model = conv_model(tmp_path / "conv.onnx")
    p = ferry("bench", model, "--iters", "3", "--warmup", "0", "--profile", tmp_path / "t.json", check_rc=0)
    trace = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert trace and all(e["ph"] == "X" and e["dur"] >= 0 and "kernel" in e["args"] for e in trace)
    # The optimizer fused Conv + Relu for the cpu target; the backend runs that node as one
    # oneDNN convolution with an eltwise post-op: one event, its implementation named.
    fused = [e for e in trace if e["cat"] == "FusedConv"]
    assert fused and all("onednn_conv" in e["args"]["kernel"] and "+eltwise" in e["args"]["kernel"] for e in fused)
    assert not any(e["cat"] == "Relu" for e in trace)
    assert all(e["args"]["reference"] is False for e in trace)
    assert "top steps" in p.stdout and "p50" in p.stdout


def test_bench_top_lists_that_many_steps(ferry, tmp_path):
    model = conv_model(tmp_path / "conv.onnx")
    for top in (1, 2):
        p = ferry("bench", model, "--iters", "2", "--warmup", "0", "--profile", tmp_path / "t.json", "--top", str(top),
                  check_rc=0)
        lines = p.stdout.split("top steps", 1)[1].splitlines()[1:]
        assert len([ln for ln in lines if " ms " in ln]) == top, p.stdout
    p = ferry("bench", model, "--iters", "2", "--warmup", "0", "--profile", tmp_path / "t.json", "--top", "1000",
              check_rc=0)
    trace = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    lines = p.stdout.split("top steps", 1)[1].splitlines()[1:]
    assert len([ln for ln in lines if " ms " in ln]) == len(trace), p.stdout


def test_bench_batch_needs_a_symbolic_batch_dim(ferry, tmp_path):
    from test_cli import helper, save, TensorProto

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "s.onnx")
    p = ferry("bench", model, "--batch", "4", check_rc=2)
    assert "static batch dim 1" in p.stderr


def reshape_model(path):
    """y = Reshape(x [1, 4], s): whether it runs depends on the value of input s (as a model
    that branches on an input's value, like silero-vad on its sample rate, needs that value)."""
    from test_cli import helper, save, TensorProto

    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_bench_times_the_given_input_values(ferry, tmp_path):
    model = reshape_model(tmp_path / "r.onnx")
    np.save(tmp_path / "good.npy", np.array([2, 2], np.int64))
    np.save(tmp_path / "bad_value.npy", np.array([3, 3], np.int64))
    p = ferry("bench", model, "--input", f"s={tmp_path / 'good.npy'}", "--iters", "2", "--warmup", "0", "--json",
              check_rc=0)
    assert json.loads(p.stdout)["iters"] == 2
    # The value is the file's: [3, 3] cannot hold 4 elements.
    p = ferry("bench", model, "--input", f"s={tmp_path / 'bad_value.npy'}", "--iters", "2", check_rc=2)
    assert "Reshape" in p.stderr and "[3,3]" in p.stderr.replace(" ", ""), p.stderr
    np.save(tmp_path / "bad_dtype.npy", np.zeros([2], np.float32))
    p = ferry("bench", model, "--input", f"s={tmp_path / 'bad_dtype.npy'}", check_rc=2)
    assert "bad_dtype.npy" in p.stderr
    p = ferry("bench", model, "--input", f"nope={tmp_path / 'good.npy'}", check_rc=2)
    assert "no input named 'nope'" in p.stderr
    assert "NAME=FILE.npy" in ferry("bench", model, "--input", "s", check_rc=1).stderr


def loop_then_nonzero_model(path):
    """y = NonZero(Loop 3 times: v = v + 1): a Loop body and a data-dependent node after it."""
    from test_cli import helper, numpy_helper, save, TensorProto

    one = numpy_helper.from_array(np.ones([1, 8], np.float32), "one")
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["v_in", "one"], ["v_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1, 8])], [one])
    trip = numpy_helper.from_array(np.array(3, np.int64), "trip")
    cond = numpy_helper.from_array(np.array(True), "cond")
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trip", "cond", "x"], ["v"], body=body, name="the_loop"),
         helper.make_node("NonZero", ["v"], ["y"], name="the_nonzero")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, "n"])], [trip, cond])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_bench_profile_lists_the_steps_planned_at_run_time(ferry, tmp_path):
    # The plan covers the graph up to the Loop (its outputs' shapes come from the run); the
    # profile must still show the Loop body's steps (once per run, summed over the 3 trips) and
    # the NonZero after it, not only the planned prefix.
    model = loop_then_nonzero_model(tmp_path / "loop.onnx")
    p = ferry("bench", model, "--iters", "3", "--warmup", "1", "--profile", tmp_path / "t.json", check_rc=0)
    top = p.stdout.split("top steps", 1)[1]
    add = [ln for ln in top.splitlines() if " Add " in ln]
    assert add and "[x3]" in add[0], top
    assert any("NonZero 'the_nonzero'" in ln and "ref_NonZero" in ln and "[reference kernel]" in ln
               for ln in top.splitlines()), top
    trace = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert [e["cat"] for e in trace].count("Add") == 3 and trace[-1]["cat"] == "NonZero", trace


def test_bench_rejects_bad_options(ferry, tmp_path):
    model = conv_model(tmp_path / "conv.onnx")
    assert "--backend" in ferry("bench", model, "--backend", "gpu", check_rc=1).stderr
    assert "--iters" in ferry("bench", model, "--iters", "0", check_rc=1).stderr


def test_run_backends_agree_with_onnxruntime(ferry, tmp_path):
    model = conv_model(tmp_path / "conv.onnx")
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    want = ort_run(model, {"x": x})["y"]
    for backend in ("cpu", "reference"):
        ferry("run", model, "--input", f"x={tmp_path / 'x.npy'}", "--backend", backend, "--output-dir",
              tmp_path / backend, check_rc=0)
        got = np.load(tmp_path / backend / "y.npy")
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert "--backend" in ferry("run", model, "--backend", "tpu", check_rc=1).stderr


def test_inspect_memory_reports_planned_peak_below_naive_sum(ferry, tmp_path):
    model = conv_model(tmp_path / "conv.onnx")
    p = ferry("inspect", model, "--memory", check_rc=0)
    assert "planned arena" in p.stdout and "naive sum" in p.stdout
    j = json.loads(ferry("inspect", model, "--memory", "--json", check_rc=0).stdout)
    m = j["memory"]
    assert 0 < m["arena_bytes"] <= m["naive_bytes"]
