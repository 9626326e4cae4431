"""Comparing a candidate's outputs with the baseline's.

Per output: MAE = mean |got - ref|, max-AE = max |got - ref|, cosine =
<got, ref> / (|got| |ref|) over the flattened tensors (1.0 when both are all
zero), all in float64. A failure -- a missing output, a wrong shape or dtype
kind, a NaN or Inf where the baseline is finite -- makes the comparison fail
with the reason; then MAE and max-AE are inf and cosine 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class OutputComparison:
    name: str
    shape: list
    mae: float
    max_ae: float
    cosine: float
    allclose: bool
    failure: str = ""

    def to_json(self):
        return {
            "name": self.name,
            "shape": self.shape,
            "mae": _num(self.mae),
            "max_ae": _num(self.max_ae),
            "cosine": _num(self.cosine),
            "allclose": self.allclose,
            "failure": self.failure or None,
        }


def _num(v):
    return None if v is None or not math.isfinite(v) else float(v)


def pair_outputs(ref_names, got_names):
    """(ref index, got index) pairs: by name when the name sets agree, else by position."""
    if sorted(ref_names) == sorted(got_names):
        return [(i, got_names.index(n)) for i, n in enumerate(ref_names)]
    return [(i, i) for i in range(min(len(ref_names), len(got_names)))]


def failed(name, shape, reason):
    return OutputComparison(name, shape, math.inf, math.inf, 0.0, False, reason)


def compare(name, ref, got, atol, rtol):
    ref = np.asarray(ref)
    got = np.asarray(got)
    if got.shape != ref.shape:
        return failed(name, list(got.shape), f"wrong shape {list(got.shape)}, the baseline's is {list(ref.shape)}")
    if ref.dtype.kind in "fc" and got.dtype.kind not in "fc":
        return failed(name, list(got.shape), f"dtype {got.dtype}, the baseline's is {ref.dtype}")
    r = ref.astype(np.float64).ravel()
    g = got.astype(np.float64).ravel()
    bad = ~np.isfinite(g) & np.isfinite(r)
    if bad.any():
        nan, inf = int(np.isnan(g[bad]).sum()), int(np.isinf(g[bad]).sum())
        what = " and ".join(x for x in (f"{nan} NaN" if nan else "", f"{inf} Inf" if inf else "") if x)
        return failed(name, list(got.shape), f"{what} value{'s' if nan + inf > 1 else ''} where the baseline is finite")
    if r.size == 0:
        return OutputComparison(name, list(got.shape), 0.0, 0.0, 1.0, True)
    both = np.isfinite(r) & np.isfinite(g)
    diff = np.abs(g[both] - r[both])
    # Where the baseline itself is NaN/Inf, the candidate must match it exactly.
    same_special = bool(np.all((g[~both] == r[~both]) | (np.isnan(g[~both]) & np.isnan(r[~both]))))
    mae = float(diff.mean()) if diff.size else 0.0
    max_ae = float(diff.max()) if diff.size else 0.0
    nr, ng = float(np.linalg.norm(r[both])), float(np.linalg.norm(g[both]))
    if nr == 0 and ng == 0:
        cosine = 1.0
    elif nr == 0 or ng == 0:
        cosine = 0.0
    else:
        cosine = float(np.dot(r[both], g[both]) / (nr * ng))
    allclose = same_special and bool(np.all(diff <= atol + rtol * np.abs(r[both])))
    fail = "" if same_special else "NaN/Inf where the baseline has other values"
    if fail:
        return OutputComparison(name, list(got.shape), math.inf, math.inf, cosine, False, fail)
    return OutputComparison(name, list(got.shape), mae, max_ae, cosine, allclose)
