#!/usr/bin/env python3
"""A sandwich A/B: ferry `--precision auto`, OpenVINO bf16, ferry again, per round.

    .venv/bin/python bench/ov_sandwich_ab.py MODEL.onnx [ROUNDS]

Prints per round OpenVINO's p50 over the mean of the two ferry p50s around it, and the
median over rounds. The host drifts between speed states within seconds; the sandwich
keeps each ratio inside one state (bench/RESULTS.md). 2 threads each, 10 timed runs.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import openvino as ov

FERRY = Path(__file__).resolve().parents[1] / "build" / "ferry"


def ferry_p50(model: str) -> float:
    cmd = [str(FERRY), "bench", model, "--precision", "auto", "--iters", "10", "--warmup", "3", "--threads", "2", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["latency_ms"]["p50"]


def main() -> None:
    model, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 6
    cm = ov.Core().compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": 2, "INFERENCE_PRECISION_HINT": "bf16",
                                                "PERFORMANCE_HINT": "LATENCY"})
    req = cm.create_infer_request()
    shape = [d if d > 0 else 1 for d in cm.inputs[0].get_partial_shape().get_min_shape()]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def ov_p50(n: int = 10) -> float:
        for _ in range(3):
            req.infer({0: x})
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            req.infer({0: x})
            ts.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ts)

    print(f"load {os.getloadavg()[0]:.2f}")
    ratios = []
    for r in range(rounds):
        a, b, c = ferry_p50(model), ov_p50(), ferry_p50(model)
        ratios.append(b / ((a + c) / 2))
        print(f"round {r}: ferry {a:.1f} / {c:.1f} ms  OpenVINO bf16 {b:.1f} ms  OV / ferry {ratios[-1]:.3f}", flush=True)
    print(f"median OV / ferry {statistics.median(ratios):.3f}; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
