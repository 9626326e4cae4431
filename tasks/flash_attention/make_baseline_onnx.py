"""Writes baseline.onnx: the baseline module (baseline.py) as an ONNX graph, with
the weights `ferry evaluate` gives the module (torch.manual_seed(seed), then
Model(**init), both from task.toml), so kernel-plugin submissions run the very
computation the baseline does:

    Q = x Wq^T + bq,  K = x Wk^T + bk,  V = x Wv^T + bv            MatMul + Add
    A = Attention(Q, K, V)  {q_num_heads = kv_num_heads = 1, scale = 1/sqrt(D)}   (ONNX opset 23)
    y = A Wo^T + bo

The attention is the single standard op the task is about: ferry imports it
as its Attention op, which a plugin (task.toml [model] op) replaces.

    python make_baseline_onnx.py [--task task.toml] [--out baseline.onnx]
"""

import argparse
import importlib.util
import sys
import tomllib
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default=str(HERE / "task.toml"))
    ap.add_argument("--out", default=None, help="default: [model] path of the task")
    args = ap.parse_args()
    task_file = Path(args.task)
    task = tomllib.loads(task_file.read_text(encoding="utf-8"))
    base = task["baseline"]
    out = Path(args.out) if args.out else task_file.parent / task["model"]["path"]
    x_spec = task["inputs"][0]
    shape = list(x_spec["shape"])

    spec = importlib.util.spec_from_file_location("baseline", task_file.parent / base["path"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(int(base.get("seed", 0)))
    model = getattr(module, base.get("class", "Model"))(**base.get("init", {})).eval()
    d = model.q_proj.in_features

    inits, nodes = [], []

    def linear(name, layer, x):
        w = numpy_helper.from_array(layer.weight.detach().numpy().T.copy().astype(np.float32), f"{name}.weight_t")
        b = numpy_helper.from_array(layer.bias.detach().numpy().astype(np.float32), f"{name}.bias")
        inits.extend([w, b])
        nodes.append(helper.make_node("MatMul", [x, w.name], [f"{name}_mm"], name=f"{name}/MatMul"))
        nodes.append(helper.make_node("Add", [f"{name}_mm", b.name], [name], name=f"{name}/Add"))
        return name

    q, k, v = linear("q", model.q_proj, "x"), linear("k", model.k_proj, "x"), linear("v", model.v_proj, "x")
    nodes.append(helper.make_node("Attention", [q, k, v], ["attn"], name="attention", q_num_heads=1,
                                  kv_num_heads=1, scale=float(model.scale)))
    y = linear("out", model.out_proj, "attn")
    nodes.append(helper.make_node("Identity", [y], ["y"], name="output"))
    graph = helper.make_graph(
        nodes, "flash_attention_baseline",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape[:-1] + [d])],
        initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], producer_name="ferry tasks")
    m.ir_version = 10
    onnx.checker.check_model(m)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(m, str(out))
    print(f"wrote {out} (x {shape}, d_model {d}, seed {base.get('seed', 0)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
