#!/usr/bin/env python3
"""Issue 14's bf16 target on the whole suite: ferry `--precision auto` with the accuracy guard on
(its default budget) against ONNX Runtime fp32 and OpenVINO bf16, batch 1 and 8.

Each suite model (bench/run_bench.py's list, the symbolic-batch exports under bench/models/) is
converted once with `ferry convert --precision auto --samples N` (calibration at batch 1; the
decisions are per node, so the converted file serves every batch) into --convert-dir, reused when
present; the conversions can run first, outside any timed run (--convert-only). Then, per model
and batch, R alternating rounds of: ferry on the converted model, ORT fp32 on the original,
OpenVINO on the original with INFERENCE_PRECISION_HINT=bf16 (2 threads, latency hint). Ratios
are peer p50 / ferry p50 within a round, median over rounds (> 1: ferry faster), and their
geometric means; ms columns are best-of-rounds p50s. Accuracy: the cosine of the flattened first
output against ORT fp32 on the seed-0 input, for ferry and for OpenVINO bf16.

    .venv/bin/python bench/bf16_suite.py --convert-only
    .venv/bin/python bench/bf16_suite.py --rounds 6 --json bench/results_bf16_suite_xeon_amx.json
    .venv/bin/python bench/bf16_suite.py --models resnet50 --accuracy-budget "cosine>=0.993" \
        --convert-dir bench/models/guarded_cos993     # at about OpenVINO bf16's accuracy

Where the CPU has no bf16 hardware, `auto` keeps fp32 (docs/precision.md) and OpenVINO ignores
its bf16 hint: the table then compares fp32 with fp32 and says so in its header.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precision_bench as pb  # noqa: E402  (ferry_time, ferry_output, errors, openvino_compiled)
import run_bench as rb  # noqa: E402  (the suite's models, inputs and timers)


def converted(name, out_dir, samples, budget=None):
    """The guarded `auto` conversion of `name` (cached in out_dir) and its guard line."""
    out = Path(out_dir) / f"{name}_auto.onnx"
    report = Path(out_dir) / f"{name}_auto.json"
    if not (out.exists() and report.exists()):
        cmd = [rb.ferry_bin(), "convert", str(rb.model_path(name, 8)), "-o", str(out), "--report", str(report),
               "--precision", "auto", "--samples", str(samples)] + rb.shape_args(rb.input_specs(name, 1))
        if budget:
            cmd += ["--accuracy-budget", budget]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ferry convert {name} failed: {r.stderr.strip()[-400:]}")
    prec = json.loads(report.read_text()).get("precision", {})
    return out, {"summary": prec.get("summary", ""), "guard": prec.get("guard", "")}


def measure(name, batch, args):
    from common import make_inputs

    path = rb.model_path(name, 8)
    ferry_model, guard = converted(name, args.convert_dir, args.samples, args.accuracy_budget)
    specs = rb.input_specs(name, batch)
    feeds = make_inputs(specs, seed=0)
    sess = rb.ort_session(path, args.threads)
    ov = pb.openvino_compiled(path, args.threads, "bf16")
    iters = max(5, args.iters // batch) if batch > 1 else args.iters
    p50 = {"ferry_auto": [], "ort_fp32": [], "openvino_bf16": []}
    for _ in range(args.rounds):
        p50["ferry_auto"].append(pb.ferry_time(ferry_model, specs, args.threads, args.warmup, iters, None))
        p50["ort_fp32"].append(float(np.percentile(rb.time_ort(sess, feeds, args.warmup, iters), 50)))
        p50["openvino_bf16"].append(float(np.percentile(rb.time_openvino(ov, feeds, args.warmup, iters), 50)))
    ref_name = sess.get_outputs()[0].name
    ref = sess.run(None, feeds)[0]
    with tempfile.TemporaryDirectory() as tmp:
        got = np.load(pb.out_file(pb.ferry_output(ferry_model, feeds, None, tmp, "auto"), ref_name))
    acc = {"ferry_auto": pb.errors(got, ref), "openvino_bf16": pb.errors(np.asarray(next(iter(ov(feeds).values()))), ref)}
    ratio = {k: statistics.median(a / f for a, f in zip(p50[k], p50["ferry_auto"])) for k in ("ort_fp32", "openvino_bf16")}
    return {"model": name, "batch": batch, "rounds_p50_ms": p50, "best_p50_ms": {k: min(v) for k, v in p50.items()},
            "round_ratio_over_ferry": ratio, "accuracy_vs_ort_fp32": acc, "guard": guard, "iters": iters}


def markdown(rows, load_before, load_after):
    out = [f"{rb.machine()}; load average {load_before:.2f} before / {load_after:.2f} after", "",
           "| model | batch | ferry auto ms | ORT fp32 ms | OpenVINO bf16 ms | ORT fp32 / ferry | OpenVINO bf16 / ferry |"
           " cos ferry auto | cos OpenVINO bf16 | ferry precision |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        b, q, a = r["best_p50_ms"], r["round_ratio_over_ferry"], r["accuracy_vs_ort_fp32"]
        out.append(f"| {r['model']} | {r['batch']} | {b['ferry_auto']:.2f} | {b['ort_fp32']:.2f} | "
                   f"{b['openvino_bf16']:.2f} | {q['ort_fp32']:.2f}x | {q['openvino_bf16']:.2f}x | "
                   f"{a['ferry_auto']['cosine']:.6f} | {a['openvino_bf16']['cosine']:.6f} | {r['guard']['summary']} |")
    for k in ("ort_fp32", "openvino_bf16"):
        out.append(f"\ngeometric mean of the per-round {k} / ferry ratios over {len(rows)} runs: "
                   f"{rb.geomean([r['round_ratio_over_ferry'][k] for r in rows]):.3f}x")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=rb.MODELS, choices=rb.MODELS)
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--iters", type=int, default=10, help="timed runs per round at batch 1 (fewer at larger batches)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--samples", type=int, default=4, help="seeded calibration samples for the guard")
    ap.add_argument("--accuracy-budget", metavar="TERMS",
                    help="the guard's budget (ferry convert --accuracy-budget; default: its own): e.g. about "
                         "OpenVINO bf16's measured cosine, for a comparison at equal accuracy (use its own --convert-dir)")
    ap.add_argument("--convert-dir", default=str(rb.REPO / "bench" / "models" / "guarded"),
                    help="where the converted models are kept and reused")
    ap.add_argument("--convert-only", action="store_true", help="convert every model and stop (no timing)")
    ap.add_argument("--json", metavar="FILE", help="write raw results as JSON")
    args = ap.parse_args(argv)
    if not rb.have_openvino():
        sys.exit("bf16_suite: openvino is not installed")
    Path(args.convert_dir).mkdir(parents=True, exist_ok=True)
    if args.convert_only:
        for m in args.models:
            _, guard = converted(m, args.convert_dir, args.samples, args.accuracy_budget)
            print(f"{m}: {guard['summary']}; {guard['guard']}", flush=True)
        return
    before = rb.load_avg()[0]
    rows = []
    for m in args.models:
        for b in args.batches:
            print(f"{m} b{b} ...", flush=True)
            rows.append(measure(m, b, args))
    after = rb.load_avg()[0]
    print(markdown(rows, before, after))
    if args.json:
        Path(args.json).write_text(json.dumps({"when": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                                               "machine": rb.machine(), "load_before": before, "load_after": after,
                                               "threads": args.threads, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
