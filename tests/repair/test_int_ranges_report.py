"""`ferry inspect` reports the int64 values whose range the graph proves within int32
(repair/int_ranges.h): a static dim's shape arithmetic is proven, one through a dynamic dim
or a graph input is not."""

import json
import subprocess

from model_cache import ferry_binary, unavailable


def test_inspect_lists_int64_values_proven_narrow(tmp_path):
    try:
        import onnx
        from onnx import TensorProto as T, helper as h, numpy_helper as nh
    except ImportError as e:
        unavailable(f"{e.name} not installed")
    import numpy as np

    binary = ferry_binary()
    if binary is None:
        unavailable("build/ferry is missing (FERRY_BIN overrides)")
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("Gather", ["s", "one"], ["d"], axis=0),             # 128: proven
             h.make_node("Gather", ["s", "zero"], ["n"], axis=0),            # N: unbounded
             h.make_node("Range", ["zero", "d", "one"], ["r"]),              # [0, 128]: proven
             h.make_node("Add", ["r", "offset"], ["r_off"]),                 # plus a graph input: not
             h.make_node("Gather", ["x", "r"], ["y"], axis=1)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", 128]),
                                  h.make_tensor_value_info("offset", T.INT64, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("n", T.INT64, None),
                      h.make_tensor_value_info("r_off", T.INT64, None)],
                     [nh.from_array(np.array(0, np.int64), "zero"), nh.from_array(np.array(1, np.int64), "one")])
    path = tmp_path / "m.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
    proc = subprocess.run([str(binary), "inspect", str(path), "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)["int64_ranges"]
    proven = set(r["proven_int32"])
    assert {"zero", "one", "d", "r"} <= proven, r
    assert not ({"s", "n", "offset", "r_off"} & proven), r
    text = subprocess.run([str(binary), "inspect", str(path)], capture_output=True, text=True, timeout=60).stdout
    assert f"int64 values: {r['int64_values']}, {len(proven)} proven within int32" in text
