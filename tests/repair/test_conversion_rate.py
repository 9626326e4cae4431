"""bench/conversion_rate.py on three small models: one ferry converts as it is, one that needs
--repair (a com.microsoft FastGelu), one nothing converts (an op of an unknown domain). The
rates, the per-group counts and the failure reasons must say exactly that."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from model_cache import ferry_binary, unavailable

REPO = Path(__file__).resolve().parents[2]


def one_node(path, op, domain=""):
    from onnx import TensorProto as T, helper as h, save

    g = h.make_graph([h.make_node(op, ["x"], ["y"], domain=domain)], op,
                     [h.make_tensor_value_info("x", T.FLOAT, [2, 8])], [h.make_tensor_value_info("y", T.FLOAT, [2, 8])])
    opsets = [h.make_opsetid("", 17)] + ([h.make_opsetid(domain, 1)] if domain else [])
    save(h.make_model(g, opset_imports=opsets), path)


def test_conversion_rate_on_three_models(tmp_path):
    try:
        import onnx  # noqa: F401
    except ImportError as e:
        unavailable(f"{e.name} not installed")
    binary = ferry_binary()
    if binary is None:
        unavailable("build/ferry is missing (FERRY_BIN overrides)")
    models = tmp_path / "models"
    models.mkdir()
    one_node(models / "relu.onnx", "Relu")
    one_node(models / "fast_gelu.onnx", "FastGelu", "com.microsoft")
    one_node(models / "custom.onnx", "Frobnicate", "com.example")
    out = tmp_path / "rate.json"
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "conversion_rate.py"), "--ferry", str(binary),
                           "--json", str(out), "--md", str(tmp_path / "rate.md"), str(models)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    d = json.loads(out.read_text())
    s = d["summary"]
    assert (s["models"], s["plain_ok"], s["repair_ok"]) == (3, 1, 2), s
    assert np.isclose(s["plain_rate"], 1 / 3) and np.isclose(s["repair_rate"], 2 / 3)
    rows = {r["model"]: r for r in d["models"]}
    assert rows["relu.onnx"]["plain"]["ok"] and rows["relu.onnx"]["repair"]["ok"]
    assert "use --repair" in rows["fast_gelu.onnx"]["plain"]["reason"]
    assert rows["fast_gelu.onnx"]["repair"] == {**rows["fast_gelu.onnx"]["repair"], "ok": True, "repairs": 1}
    assert "no importer for ops of domain 'com.example'" in rows["custom.onnx"]["repair"]["reason"]
    md = (tmp_path / "rate.md").read_text()
    assert "3 models: `ferry convert` succeeds on 1 (33.3%), with `--repair` on 2 (66.7%)." in md
    assert "custom.onnx" in md and "relu.onnx" not in md  # failures only
