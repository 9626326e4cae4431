"""What the bf16 step and bf16 Attention tests share: running the CLI, ONNX Runtime fp32 as the
reference, and the error measure (of max|y|)."""
import subprocess

import numpy as np


def ferry(ferry_cli, *args, env=None):
    r = subprocess.run([str(ferry_cli), *map(str, args)], capture_output=True, text=True, timeout=300, check=False,
                       env=env)
    assert r.returncode == 0, f"ferry {' '.join(map(str, args))}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def ort_fp32(ort, path, feed):
    """Output y of ONNX Runtime without graph optimizations: the fp32 definition."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(["y"], feed)[0]


def rel_err(got, want):
    return float(np.abs(got - want).max()) / float(np.abs(want).max())
