#!/usr/bin/env python3
"""Lowered precision side by side: ferry fp32 / bf16 / auto against ONNX Runtime fp32 and
OpenVINO f32 / bf16, with each lowered output's error against ORT fp32.

For each model (the suite's full-size exports, bench/run_bench.py), alternating in one run
(R rounds of: ferry at each precision, ORT, OpenVINO at each hint; same thread count; every
engine with its own thread settings unless --no-spin),
measures p50 latency and reports the best p50 per engine, the speedups over ferry fp32 and
the ratios peer / ferry-bf16 (> 1: ferry bf16 is faster). Accuracy: `ferry run
--precision P` on the same seeded inputs against ORT fp32, as the cosine of the flattened
first output and max |a - b| / max(1, |b|); OpenVINO bf16 the same way.

    .venv/bin/python bench/precision_bench.py --models resnet50 bert --rounds 2
    .venv/bin/python bench/precision_bench.py --json bench/precision_results.json

Where the CPU has no bf16 hardware ferry's bf16 is emulation (slower than fp32: the report
says so per node) and OpenVINO ignores its bf16 hint; the table prints what ran.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_bench as rb  # noqa: E402  (the suite's models, inputs and timers)

PRECISIONS = ["fp32", "bf16", "auto"]


def ferry_time(path, specs, threads, warmup, iters, precision):
    cmd = [rb.ferry_bin(), "bench", str(path), "--json", "--threads", str(threads), "--warmup", str(warmup),
           "--iters", str(iters), "--precision", precision]
    for s in specs:
        cmd += ["--shape", f"{s['name']}={'x'.join(str(d) for d in s['shape'])}"]
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if not rb.SPIN:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"ferry bench --precision {precision} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)["latency_ms"]["p50"]


def errors(got, ref):
    a, b = got.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    cos = float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-300))
    return {"cosine": cos, "max_rel": float(np.max(np.abs(a - b) / np.maximum(1, np.abs(b))))}


def ferry_output(path, feeds, precision, tmp):
    args = []
    for k, v in feeds.items():
        f = Path(tmp) / f"in_{re.sub(r'[^A-Za-z0-9_.-]', '_', k)}.npy"
        np.save(f, v)
        args += ["--input", f"{k}={f}"]
    out = Path(tmp) / f"out_{precision}"
    r = subprocess.run([rb.ferry_bin(), "run", str(path), "--precision", precision, "--output-dir", str(out)] + args,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ferry run --precision {precision} failed: {r.stderr.strip()}")
    return out


def openvino_compiled(path, threads, hint):
    import openvino as ov

    cfg = {"INFERENCE_PRECISION_HINT": hint, "PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads}
    return ov.Core().compile_model(str(path), "CPU", cfg)


def measure(name, args, hints):
    from common import make_inputs

    path = rb.model_path(name, 1)
    specs = rb.input_specs(name, 1)
    feeds = make_inputs(specs, seed=0)
    sess = rb.ort_session(path, args.threads)
    ovs = {h: openvino_compiled(path, args.threads, h) for h in hints}
    p50 = {**{f"ferry_{p}": [] for p in PRECISIONS}, "ort": [], **{f"openvino_{h}": [] for h in hints}}
    for _ in range(args.rounds):
        for p in PRECISIONS:
            p50[f"ferry_{p}"].append(ferry_time(path, specs, args.threads, args.warmup, args.iters, p))
        p50["ort"].append(float(np.percentile(rb.time_ort(sess, feeds, args.warmup, args.iters), 50)))
        for h, c in ovs.items():
            p50[f"openvino_{h}"].append(float(np.percentile(rb.time_openvino(c, feeds, args.warmup, args.iters), 50)))
    best = {k: min(v) for k, v in p50.items()}
    ref_out = sess.get_outputs()[0].name
    ref = sess.run(None, feeds)[0]
    acc = {}
    with tempfile.TemporaryDirectory() as tmp:
        for p in PRECISIONS:
            out = ferry_output(path, feeds, p, tmp)
            acc[f"ferry_{p}"] = errors(np.load(out / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', ref_out)}.npy"), ref)
    for h, c in ovs.items():
        acc[f"openvino_{h}"] = errors(np.asarray(list(c(feeds).values())[0]), ref)
    return {"model": name, "best_p50_ms": best, "rounds_p50_ms": p50, "accuracy_vs_ort_fp32": acc}


def markdown(rows, hints, load_before, load_after):
    cols = [f"ferry_{p}" for p in PRECISIONS] + ["ort"] + [f"openvino_{h}" for h in hints]
    out = [f"{rb.machine()}; load average {load_before:.2f} before / {load_after:.2f} after; "
           f"{'idle threads sleep (--no-spin)' if not rb.SPIN else 'every engine its own thread settings'}",
           "", "| model | " + " | ".join(f"{c} ms" for c in cols) + " | bf16 / fp32 speedup | ORT fp32 / ferry bf16 |"
           + "".join(f" OV {h} / ferry bf16 |" for h in hints) + " cos ferry bf16 | cos ferry auto |"
           + "".join(f" cos OV {h} |" for h in hints),
           "|" + " --- |" * (1 + len(cols) + 4 + 2 * len(hints))]
    for r in rows:
        b, a = r["best_p50_ms"], r["accuracy_vs_ort_fp32"]
        line = f"| {r['model']} | " + " | ".join(f"{b[c]:.2f}" for c in cols)
        line += f" | {b['ferry_fp32'] / b['ferry_bf16']:.2f}x | {b['ort'] / b['ferry_bf16']:.2f}x |"
        line += "".join(f" {b[f'openvino_{h}'] / b['ferry_bf16']:.2f}x |" for h in hints)
        line += f" {a['ferry_bf16']['cosine']:.6f} | {a['ferry_auto']['cosine']:.6f} |"
        line += "".join(f" {a[f'openvino_{h}']['cosine']:.6f} |" for h in hints)
        out.append(line)
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["resnet50", "mobilenet_v2", "bert", "vit_b_16"], choices=rb.MODELS)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds per model; best p50 kept")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-spin", action="store_true",
                    help="ferry's and ORT's idle threads sleep (OMP PASSIVE, allow_spinning=0); OpenVINO keeps its own "
                         "policy, so the default (every engine's own settings) is the fair headline")
    ap.add_argument("--json", metavar="FILE", help="write raw results as JSON")
    args = ap.parse_args(argv)
    rb.SPIN = not args.no_spin
    hints = ["f32", "bf16"] if rb.have_openvino() else []
    if os.environ.get("CI") == "true" and not hints:
        sys.exit("precision_bench: openvino is not installed")
    before = rb.load_avg()[0]
    rows = []
    for m in args.models:
        print(f"{m} ...", flush=True)
        rows.append(measure(m, args, hints))
    after = rb.load_avg()[0]
    print(markdown(rows, hints, before, after))
    if args.json:
        Path(args.json).write_text(json.dumps({"when": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                                               "machine": rb.machine(), "load_before": before, "load_after": after,
                                               "spin": rb.SPIN,
                                               "threads": args.threads, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
