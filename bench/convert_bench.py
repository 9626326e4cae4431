#!/usr/bin/env python3
"""Side-by-side benchmark of offline graph optimization: ferry's convert against ONNX Runtime's.

ferry:  `ferry convert MODEL -o OUT.onnx` as a subprocess (wall time, process start
        included) — parse, import, shape inference, the whole optimizer, write ONNX.
ORT:    onnxruntime.InferenceSession(model, so) with all graph optimizations and
        so.optimized_model_filepath = out — ORT's documented way to optimize a model
        offline. It also creates (and pre-packs) its kernels, which ferry's convert
        does not; the ratio therefore flatters ferry somewhat; see the printed note.

ORT runs in this process (only the session creation is timed), alternating with
ferry per round (R rounds of ferry then ORT), one intra-op thread. Reports the median wall time of each, the ratio ORT/ferry
(> 1: ferry is faster) and ferry's node count before and after.

Models: the full-size ResNet-50 and BERT-base exports of tests/models/gen/export_models.py
(tests/models/generated/full; made on first use by that script if missing).

    .venv/bin/python bench/convert_bench.py
    .venv/bin/python bench/convert_bench.py --models resnet50 --rounds 3
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FULL = REPO / "tests" / "models" / "generated" / "full"
MODELS = ["resnet50", "bert"]


def ensure_model(name: str) -> Path:
    path = FULL / f"{name}.onnx"
    if not path.exists():
        sys.path.insert(0, str(REPO / "tests" / "models" / "gen"))
        import export_models

        export_models.main([str(FULL), "--size", "full", "--only", name])
    return path


def ferry_bin() -> str:
    return os.environ.get("FERRY_BIN", str(REPO / "build" / "ferry"))


def time_ferry(path: Path, out: Path) -> float:
    t = time.perf_counter()
    subprocess.run([ferry_bin(), "convert", str(path), "-o", str(out)], check=True, capture_output=True)
    return time.perf_counter() - t


def node_count(path: Path, optimized: bool) -> int:
    cmd = [ferry_bin(), "inspect", str(path), "--json"] + (["--optimized"] if optimized else [])
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["num_nodes"]


def time_ort(path: Path, out: Path) -> float:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.optimized_model_filepath = str(out)
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    t = time.perf_counter()
    ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)

    import onnxruntime as ort

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            path = ensure_model(name)
            ferry_s, ort_s = [], []
            time_ferry(path, Path(tmp) / "warm.onnx")  # page cache, lazy imports
            for _ in range(args.rounds):
                ferry_s.append(time_ferry(path, Path(tmp) / f"{name}.ferry.onnx"))
                ort_s.append(time_ort(path, Path(tmp) / f"{name}.ort.onnx"))
            f, o = statistics.median(ferry_s), statistics.median(ort_s)
            rows.append({"model": name, "ferry_s": f, "ort_s": o, "ratio": o / f,
                         "nodes_before": node_count(path, False), "nodes_after": node_count(path, True),
                         "ferry_all_s": ferry_s, "ort_all_s": ort_s})
    print(f"ferry ({ferry_bin()}) vs onnxruntime {ort.__version__}, {args.rounds} rounds, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| model | ferry convert (s) | ORT offline optimize (s) | ORT/ferry | ferry nodes before -> after |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['ferry_s']:.3f} | {r['ort_s']:.3f} | {r['ratio']:.2f}x | "
              f"{r['nodes_before']} -> {r['nodes_after']} |")
    print("note: ORT's time includes creating its kernels (weight pre-packing); ferry's includes writing the ONNX file.")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
