"""Seeded inputs: trial k of a task draws every input, in task order, from
numpy.random.default_rng(trials.seed + k) (docs/evaluate.md, "Inputs")."""

from __future__ import annotations

import numpy as np


def make_inputs(specs, seed):
    """{name: array} for one trial."""
    rng = np.random.default_rng(seed)
    out = {}
    for s in specs:
        shape = tuple(s.shape)
        dtype = np.dtype(s.dtype)
        if s.generator == "normal":
            a = rng.normal(s.mean, s.std, size=shape)
        elif s.generator == "uniform":
            a = rng.uniform(s.low, s.high, size=shape)
        elif s.generator == "randint":
            a = rng.integers(int(s.low), int(s.high), size=shape)
        elif s.generator == "zeros":
            a = np.zeros(shape)
        else:
            a = np.ones(shape)
        out[s.name] = np.ascontiguousarray(a.astype(dtype)) if shape else np.asarray(a, dtype)
    return out


def save_inputs(arrays, path):
    """Uncompressed .npz (the C++ worker reads it with validate/npz.h)."""
    np.savez(path, **arrays)
    return path
