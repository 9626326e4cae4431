"""Score arithmetic against hand-computed cases (python/ferry/evaluate/score.py),
the comparison metrics (metrics.py) and the task file's defaults (task.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ferry.evaluate import metrics, score
from ferry.evaluate.task import Band, EvaluateError, ScoreRule, load_task

MS = 1e6  # ns


def perf(rule, base_ms, sub_ms, acc=20.0, failure=""):
    return score.performance_points(rule, base_ms * MS, sub_ms * MS, acc, failure).points


def test_performance_is_60_times_min_1_baseline_over_latency():
    rule = ScoreRule()
    assert perf(rule, 12, 8) == 60.0          # faster than the baseline: capped at 60
    assert perf(rule, 12, 12) == 60.0
    assert perf(rule, 12, 24) == 30.0         # twice as slow: 60 * 1/2
    assert perf(rule, 12, 48) == 15.0
    assert perf(rule, 10, 30) == pytest.approx(20.0)
    assert perf(rule, 10, 1000) == pytest.approx(0.6)


def test_performance_with_another_contests_cap_and_weight():
    rule = ScoreRule(perf_points=50, perf_cap=2.0)
    assert perf(rule, 10, 4) == 50.0          # speedup 2.5, capped at 2: 50 * 2 / 2
    assert perf(rule, 10, 5) == 50.0          # speedup 2
    assert perf(rule, 10, 10) == 25.0         # speedup 1: 50 * 1 / 2
    assert perf(rule, 10, 20) == 12.5


def test_performance_needs_accuracy_and_no_failure():
    rule = ScoreRule()
    assert perf(rule, 12, 1, acc=0.0) == 0.0
    assert "requires_accuracy" in score.performance_points(rule, 12 * MS, MS, 0.0).detail
    assert perf(ScoreRule(perf_requires_accuracy=False), 12, 6, acc=0.0) == 60.0
    p = score.performance_points(rule, 12 * MS, MS, 20.0, failure="trial 0: crashed")
    assert p.points == 0 and "crashed" in p.detail
    assert perf(rule, 12, 0) == 0.0           # no latency


def test_accuracy_bands_are_strict_upper_bounds():
    rule = ScoreRule()
    assert score.accuracy_points(rule, 5e-4).points == 20
    assert score.accuracy_points(rule, 0.0).points == 20
    assert score.accuracy_points(rule, 1e-3).points == 15     # MAE < 1e-3 is 20, so 1e-3 itself is 15
    assert score.accuracy_points(rule, 9.99e-3).points == 15
    assert score.accuracy_points(rule, 1e-2).points == 0
    assert score.accuracy_points(rule, 0.3).points == 0
    assert score.accuracy_points(rule, math.nan).points == 0
    assert score.accuracy_points(rule, None).points == 0
    assert score.accuracy_points(rule, 1e-9, failure="NaN").points == 0
    assert score.accuracy_points(rule, 1e-9).max == 20


def test_accuracy_custom_bands():
    rule = ScoreRule(acc_bands=[Band(1e-4, 30.0), Band(1e-3, 20.0), Band(1e-1, 5.0)])
    assert [score.accuracy_points(rule, v).points for v in (5e-5, 5e-4, 5e-2, 0.5)] == [30, 20, 5, 0]
    assert rule.acc_points == 30 and rule.total_points == 60 + 30 + 20


def test_quality_sums_the_checks():
    rule = ScoreRule()
    checks = [{"name": "tests", "points": 6, "max": 6, "status": "pass", "detail": ""},
              {"name": "readme", "points": 3, "max": 5, "status": "partial", "detail": ""},
              {"name": "lint", "points": 0, "max": 3, "status": "fail", "detail": ""},
              {"name": "reviewer", "points": 0, "max": 6, "status": "pending", "detail": ""}]
    q = score.quality_points(rule, checks)
    assert q.points == 9 and q.max == 20
    assert "reviewer 0/6 (pending)" in q.detail
    total, most = score.total([score.Part(42.5, 60, ""), score.Part(15, 20, ""), q])
    assert (total, most) == (66.5, 100)


def test_the_default_rule_is_the_seeds():
    rule = ScoreRule()
    assert (rule.perf_points, rule.perf_cap, rule.perf_statistic) == (60, 1, "p50")
    assert [(b.below, b.points) for b in rule.acc_bands] == [(1e-3, 20), (1e-2, 15)]
    assert rule.quality_points == 20 and rule.total_points == 100


def test_metrics_hand_computed():
    ref = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    got = np.array([1.0, 2.0, 3.0, 5.0], np.float32)
    c = metrics.compare("y", ref, got, atol=1e-4, rtol=1e-4)
    assert c.mae == pytest.approx(0.25) and c.max_ae == pytest.approx(1.0)
    assert c.cosine == pytest.approx(34 / math.sqrt(30 * 39))
    assert not c.allclose and not c.failure
    same = metrics.compare("y", ref, ref.copy(), 0, 0)
    assert (same.mae, same.max_ae, same.cosine, same.allclose) == (0, 0, 1, True)


def test_metrics_failures_name_the_reason():
    ref = np.zeros((2, 3), np.float32)
    c = metrics.compare("y", ref, np.zeros((3, 2), np.float32), 1e-4, 1e-4)
    assert "wrong shape [3, 2]" in c.failure and c.mae == math.inf
    bad = np.zeros((2, 3), np.float32)
    bad[0, 0], bad[1, 2] = np.nan, np.inf
    c = metrics.compare("y", ref, bad, 1e-4, 1e-4)
    assert c.failure == "1 NaN and 1 Inf values where the baseline is finite"
    assert metrics.pair_outputs(["a", "b"], ["b", "a"]) == [(0, 1), (1, 0)]
    assert metrics.pair_outputs(["output_0"], ["y"]) == [(0, 0)]


def test_shipped_tasks_parse(tmp_path):
    root = __import__("pathlib").Path(__file__).resolve().parents[2] / "tasks"
    fa = load_task(root / "flash_attention")
    assert fa.inputs[0].shape == [8, 1024, 64] and fa.trials == 5 and fa.model.op == "Attention"
    assert fa.baseline.init == {"d_model": 64}
    km = load_task(root / "keras_migration")
    assert km.baseline.kind == "tensorflow" and km.model.path == km.baseline.path
    assert km.score.acc_bands[-1].below == 1e-2


@pytest.mark.parametrize("text,message", [
    ("format = 2\n", "format = 2: this ferry reads task format 1"),
    ("format = 1\nname = 'x'\ntrack = 'operator'\n[baseline]\npath = 'b.py'\n[[inputs]]\nname = 'x'\nshape = [1]\n"
     "[score.accuracy]\nband = []\n", "score.accuracy: unknown key 'band'"),
    ("format = 1\nname = 'x'\ntrack = 'kernels'\n", "track = 'kernels' is not one of: operator, migration"),
    ("format = 1\nname = 'x'\ntrack = 'operator'\n[baseline]\npath = 'b.py'\n[[inputs]]\nname = 'x'\n"
     "shape = [-1]\n", "inputs[0].shape must be a list of non-negative integers"),
    ("format = 1\nname = 'x'\ntrack = 'operator'\n[[inputs]]\nname = 'x'\nshape = [1]\n", "missing table [baseline]"),
    ("format = [1\n", "not valid TOML"),
])
def test_malformed_task_files(tmp_path, text, message):
    (tmp_path / "task.toml").write_text(text)
    with pytest.raises(EvaluateError) as e:
        load_task(tmp_path)
    assert message in str(e.value) and str(tmp_path / "task.toml") in str(e.value)
