"""The score rule of a task (task.toml [score], docs/evaluate.md "Score").

    performance = P * min(cap, speedup) / cap     speedup = baseline statistic / submission statistic
    accuracy    = points of the first band whose `below` exceeds the metric (bands sorted), else 0
    quality     = tests + readme + lint (automated checks) + reviewer (a score file)

With the defaults P = 60, cap = 1, statistic p50, bands MAE < 1e-3 -> 20 and
MAE < 1e-2 -> 15, tests 6 + readme 5 + lint 3 + reviewer 6: the seeds' rule.
A submission that failed (crash, hang, wrong shape, NaN, error) gets 0
performance and 0 accuracy; so does a wrong one when performance requires
accuracy (requires_accuracy, default true: a fast wrong kernel earns nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class Part:
    points: float
    max: float
    detail: str
    checks: list = field(default_factory=list)

    def to_json(self):
        j = {"points": round(self.points, 4), "max": self.max, "detail": self.detail}
        if self.checks:
            j["checks"] = self.checks
        return j


def performance_points(rule, baseline_latency, latency, accuracy_points, failure=""):
    if failure:
        return Part(0.0, rule.perf_points, f"not scored: {failure}")
    if rule.perf_requires_accuracy and accuracy_points <= 0:
        return Part(0.0, rule.perf_points, "not scored: the accuracy part scored 0 (requires_accuracy)")
    if not (latency and latency > 0 and baseline_latency and baseline_latency > 0):
        return Part(0.0, rule.perf_points, "not scored: no latency measured")
    speedup = baseline_latency / latency
    points = rule.perf_points * min(rule.perf_cap, speedup) / rule.perf_cap
    cap = "1" if rule.perf_cap == 1 else f"{rule.perf_cap:g}"
    formula = (f"{rule.perf_points:g} * min({cap}, {_ms(baseline_latency)} / {_ms(latency)})"
               + ("" if rule.perf_cap == 1 else f" / {cap}"))
    return Part(points, rule.perf_points, f"{formula}  ({rule.perf_statistic}, speedup {speedup:.2f}x)")


def accuracy_points(rule, value, failure=""):
    if failure:
        return Part(0.0, rule.acc_points, f"not scored: {failure}")
    name = {"mae": "MAE", "max_ae": "max-AE"}[rule.acc_metric]
    if value is None or not math.isfinite(value):
        return Part(0.0, rule.acc_points, f"{name} is not finite")
    for band in rule.acc_bands:  # sorted by `below`
        if value < band.below:
            return Part(band.points, rule.acc_points, f"{name} {value:.3g} < {band.below:g}")
    worst = rule.acc_bands[-1].below if rule.acc_bands else 0
    return Part(0.0, rule.acc_points, f"{name} {value:.3g} >= {worst:g}")


def quality_points(rule, checks):
    """checks: list of dicts {name, points, max, status, detail} from quality.py."""
    points = sum(c["points"] for c in checks)
    detail = ", ".join(f"{c['name']} {c['points']:g}/{c['max']:g}" + ("" if c["status"] != "pending" else " (pending)")
                       for c in checks)
    return Part(points, rule.quality_points, detail, checks)


def total(parts):
    return sum(p.points for p in parts), sum(p.max for p in parts)


def _ms(ns):
    return f"{ns / 1e6:.3g} ms"
