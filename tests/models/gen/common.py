"""Shared by the model generators and the end-to-end tests.

Every generated model NAME.onnx has a sidecar NAME.json describing how to feed
it, so the test never has to guess:

    {"name": "resnet18", "file": "resnet18.onnx", "source": "torch", "size": "small",
     "opset": 17, "inputs": [InputSpec...], "outputs": ["logits"], "generator": HASH}

An InputSpec is {"name", "shape", "dtype"} plus how to draw the values:
    "dist": "normal"                      N(0, 1)            (images, features)
    "dist": "uniform", "low", "high"      U[low, high)       (log/sqrt arguments ...)
    "dist": "randint", "low", "high"      integers in [low, high)   (token ids, indices)
    "dist": "mask", "valid"               1 for the first `valid` positions of the last
                                          axis, 0 after (attention masks)
    "dist": "bool"                        fair coin flips
Inputs are drawn in order from numpy's default_rng(seed), so they are the same
on every machine.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

GEN_DIR = Path(__file__).resolve().parent


def input_spec(name, shape, dtype="float32", dist="normal", **kw):
    """One InputSpec dict (see the module docstring)."""
    spec = {"name": name, "shape": [int(d) for d in shape], "dtype": dtype, "dist": dist}
    spec.update(kw)
    return spec


def make_inputs(specs, seed=0):
    """Deterministic input arrays for a list of InputSpecs: {name: ndarray}."""
    rng = np.random.default_rng(seed)
    out = {}
    for s in specs:
        shape, dtype, dist = tuple(s["shape"]), np.dtype(s["dtype"]), s["dist"]
        if dist == "normal":
            a = rng.standard_normal(shape)
        elif dist == "uniform":
            a = rng.uniform(s["low"], s["high"], shape)
        elif dist == "randint":
            a = rng.integers(s["low"], s["high"], shape)
        elif dist == "mask":
            a = np.zeros(shape)
            a[..., : s["valid"]] = 1
        elif dist == "bool":
            a = rng.integers(0, 2, shape)
        else:
            raise ValueError(f"input {s['name']}: unknown dist {dist!r}")
        out[s["name"]] = np.ascontiguousarray(a.astype(dtype))
    return out


def generator_hash(*files):
    """Hash of the generator sources: a cached model is stale when it changes."""
    h = hashlib.sha256()
    for f in sorted(str(p) for p in files):
        h.update(Path(f).read_bytes())
    return h.hexdigest()[:16]


def temp_path(path):
    """A private temporary name next to `path`, for write-then-os.replace.

    The model cache is shared by concurrent pytest runs (tests/models and
    tests/validate both use it); replacing files atomically means a reader
    never sees a half-written model."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_sidecar(out_dir, meta):
    """Writes OUT_DIR/NAME.json next to NAME.onnx (atomically)."""
    path = Path(out_dir) / f"{meta['name']}.json"
    tmp = temp_path(path)
    tmp.write_text(json.dumps(meta, indent=1) + "\n")
    os.replace(tmp, path)
    return path


def read_sidecar(out_dir, name):
    path = Path(out_dir) / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None
