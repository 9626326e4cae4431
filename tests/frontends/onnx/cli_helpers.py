"""`ferry run` / `ferry convert` as the ONNX lowering tests call them (one output `y`)."""

from __future__ import annotations

import subprocess

import numpy as np


def ferry_run(cli, path, feeds, tmp_path, backend, extra=(), env=None):
    """Runs `path` on `backend` with `feeds` (name -> array); returns the output `y`."""
    out = tmp_path / f"out_{backend}"
    args = [str(cli), "run", str(path), "--backend", backend, "--output-dir", str(out), *extra]
    for name, arr in feeds.items():
        np.save(tmp_path / f"{name}.npy", arr)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return np.load(out / "y.npy")


def converted_ops(cli, onnx_mod, path, target, tmp_path):
    """The op types of the graph `ferry convert --target target` writes."""
    out = tmp_path / f"converted_{target}.onnx"
    r = subprocess.run([str(cli), "convert", str(path), "--target", target, "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return [n.op_type for n in onnx_mod.load(str(out)).graph.node]
