#!/usr/bin/env python3
"""Side-by-side benchmark: ferry's CPU backend against ONNX Runtime.

For each model and batch size, alternating in one run (R rounds of: ferry, then
ONNX Runtime, same thread count), measures latency; reports p50 per engine, the
ratio ORT/ferry (> 1: ferry is faster), the geometric mean of the ratios, and
output agreement (ferry vs ORT on the same seeded inputs, max |a-b| / max(1,|b|)).

Models: torchvision ResNet-50, MobileNetV2, MobileNetV3-Small, EfficientNet-B0,
ViT-B/16, a BERT-base encoder (seq 128) and GPT-2 small (seq 128), exported by
tests/models/gen/export_models.py. Batch 1 uses the cached full-size models
(tests/models/generated/full); other batches use re-exports with a symbolic
batch axis under bench/models/ (made on first use; a few minutes).

    .venv/bin/python bench/run_bench.py                       # all models, batch 1 and 8
    .venv/bin/python bench/run_bench.py --models resnet50 --batches 1 --rounds 1
    .venv/bin/python bench/run_bench.py --write bench/RESULTS.md

ONNX Runtime runs with all graph optimizations (its default), intra-op threads =
--threads, inter-op threads 1, sequential execution. ferry runs `ferry bench
--json` (compiled session: optimizer, oneDNN, own kernels).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
GEN = REPO / "tests" / "models" / "gen"
sys.path.insert(0, str(GEN))

# Whether worker threads spin while waiting for work. Spinning wins on an idle machine and
# loses badly on a shared, loaded one (a descheduled spinner stalls every barrier), so
# --no-spin turns it off for both engines alike: ORT's allow_spinning=0, OpenMP's PASSIVE.
SPIN = True

MODELS = ["resnet50", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "vit_b_16", "bert", "gpt2"]


def ferry_bin():
    return os.environ.get("FERRY_BIN", str(REPO / "build" / "ferry"))


def model_path(name, batch):
    """The .onnx for `name`: the cached batch-1 export, or a symbolic-batch re-export."""
    import export_models

    if batch == 1:
        d = REPO / "tests" / "models" / "generated" / "full"
        p = d / f"{name}.onnx"
        if not p.exists():
            print(f"  exporting {name} (full) ...", flush=True)
            export_models.export(name, "full", d)
        return p
    d = REPO / "bench" / "models"
    p = d / f"{name}_dynbatch.onnx"
    if p.exists():
        return p
    print(f"  exporting {name} with a symbolic batch axis ...", flush=True)
    import torch
    import warnings

    from common import make_inputs

    torch.manual_seed(0)
    built = export_models.BUILDERS[name]("full")
    built.module.eval()
    example = tuple(torch.from_numpy(a) for a in make_inputs(built.inputs, seed=0).values())
    dyn = {k: dict(v) for k, v in (built.dynamic_axes or {}).items()}
    for n in [s["name"] for s in built.inputs] + list(built.outputs):
        dyn.setdefault(n, {})[0] = "batch"
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".{p.name}.tmp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(built.module, example, str(tmp), opset_version=export_models.OPSET, dynamo=False,
                          input_names=[s["name"] for s in built.inputs], output_names=built.outputs,
                          dynamic_axes=dyn, do_constant_folding=True)
    os.replace(tmp, p)
    (d / f"{name}_dynbatch.json").write_text(json.dumps({"inputs": built.inputs, "outputs": built.outputs}, indent=1))
    return p


def input_specs(name, batch):
    d = REPO / "tests" / "models" / "generated" / "full"
    meta = json.loads((d / f"{name}.json").read_text())
    specs = []
    for s in meta["inputs"]:
        s = dict(s)
        s["shape"] = [batch] + list(s["shape"][1:])
        specs.append(s)
    return specs


def ort_session(path, threads):
    import onnxruntime as ort

    o = ort.SessionOptions()
    o.intra_op_num_threads = threads
    o.inter_op_num_threads = 1
    o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if not SPIN:
        o.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), o, providers=["CPUExecutionProvider"])


def time_ort(sess, feeds, warmup, iters):
    for _ in range(warmup):
        sess.run(None, feeds)
    lat = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        lat.append((time.perf_counter() - t0) * 1e3)
    return lat


def time_ferry(path, specs, batch, threads, warmup, iters):
    cmd = [ferry_bin(), "bench", str(path), "--json", "--threads", str(threads), "--warmup", str(warmup),
           "--iters", str(iters)]
    for s in specs:
        cmd += ["--shape", f"{s['name']}={'x'.join(str(d) for d in s['shape'])}"]
    env = dict(os.environ)
    if not SPIN:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"ferry bench failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def agreement(path, sess, feeds):
    """max |ferry - ort| / max(1, |ort|) over every float output (ferry run on the same inputs)."""
    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for k, v in feeds.items():
            f = Path(tmp) / f"in_{re.sub(r'[^A-Za-z0-9_.-]', '_', k)}.npy"
            np.save(f, v)
            args += ["--input", f"{k}={f}"]
        out = Path(tmp) / "out"
        r = subprocess.run([ferry_bin(), "run", str(path), "--output-dir", str(out)] + args, capture_output=True,
                           text=True)
        if r.returncode != 0:
            return float("nan"), r.stderr.strip()
        worst = 0.0
        for o, ref in zip(sess.get_outputs(), sess.run(None, feeds)):
            got = np.load(out / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', o.name)}.npy")
            if ref.dtype.kind == "f" and ref.size:
                worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - ref) / np.maximum(1, np.abs(ref)))))
        return worst, r.stderr.strip()


def load_avg():
    try:
        return os.getloadavg()
    except OSError:
        return (float("nan"),) * 3


def machine():
    cpu = platform.processor()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


def versions():
    import onnxruntime as ort

    v = subprocess.run([ferry_bin(), "--version"], capture_output=True, text=True).stdout.strip()
    v = v.removeprefix("ferry ")
    dnnl = "?"
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libdnnl2"], capture_output=True, text=True)
        dnnl = out.stdout.strip() or "?"
    except OSError:
        pass
    return {"ferry": v, "onnxruntime": ort.__version__, "oneDNN (libdnnl2)": dnnl, "numpy": np.__version__,
            "python": platform.python_version()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds (ferry, ORT) per model; best p50 kept")
    ap.add_argument("--iters", type=int, default=20, help="timed runs per round at batch 1 (fewer at larger batches)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--write", metavar="FILE", help="write the markdown report here (e.g. bench/RESULTS.md)")
    ap.add_argument("--json", metavar="FILE", help="write raw results as JSON")
    ap.add_argument("--no-spin", action="store_true",
                    help="idle worker threads sleep instead of spinning, in both engines (for a loaded machine)")
    args = ap.parse_args(argv)
    global SPIN
    SPIN = not args.no_spin

    from common import make_inputs

    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = load_avg()
    rows = []
    for name in args.models:
        for batch in args.batches:
            path = model_path(name, batch)
            specs = input_specs(name, batch)
            feeds = make_inputs(specs, seed=0)
            sess = ort_session(path, args.threads)
            iters = max(5, args.iters // batch) if batch > 1 else args.iters
            f_p50, o_p50, f_all, o_all, f_json = [], [], [], [], None
            for _ in range(args.rounds):
                f_json = time_ferry(path, specs, batch, args.threads, args.warmup, iters)
                f_p50.append(f_json["latency_ms"]["p50"])
                lat = time_ort(sess, feeds, args.warmup, iters)
                o_p50.append(float(np.percentile(lat, 50)))
            err, note = agreement(path, sess, feeds)
            f, o = min(f_p50), min(o_p50)
            row = {"model": name, "batch": batch, "ferry_p50_ms": f, "ort_p50_ms": o, "ratio_ort_over_ferry": o / f,
                   "ferry_p90_ms": f_json["latency_ms"]["p90"], "ferry_peak_rss_mb": f_json["peak_rss_mb"],
                   "ferry_rounds_p50": f_p50, "ort_rounds_p50": o_p50, "max_rel_diff": err, "iters": iters,
                   "note": note}
            rows.append(row)
            print(f"{name:20s} b{batch:<2d} ferry {f:9.2f} ms   ort {o:9.2f} ms   ort/ferry {o / f:5.2f}x   "
                  f"agreement {err:.1e}", flush=True)
    load_after = load_avg()
    ratios = [r["ratio_ort_over_ferry"] for r in rows]
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else float("nan")
    print(f"geometric mean ORT/ferry: {geo:.3f}x over {len(rows)} runs")
    result = {"date": started.isoformat(timespec="seconds"), "machine": machine(), "versions": versions(),
              "threads": args.threads, "rounds": args.rounds, "spin": SPIN, "load_avg_before": load_before,
              "load_avg_after": load_after, "rows": rows, "geomean_ort_over_ferry": geo}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    if args.write:
        Path(args.write).write_text(markdown(result))
        print(f"wrote {args.write}")
    return 0


def markdown(res):
    v = res["versions"]
    lines = [
        "# ferry vs ONNX Runtime — CPU, fp32",
        "",
        f"- date: {res['date']} (UTC)",
        f"- machine: {res['machine']}",
        f"- threads: {res['threads']} for both engines; {res['rounds']} alternating rounds per model (best p50 kept); "
        f"idle threads {'spin (defaults)' if res['spin'] else 'sleep in both engines (--no-spin)'}",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- load average (1/5/15 min) before: {', '.join(f'{x:.2f}' for x in res['load_avg_before'])}; "
        f"after: {', '.join(f'{x:.2f}' for x in res['load_avg_after'])} "
        "(the machine is shared; a load above the core count inflates both engines' times)",
        "- produced by `bench/run_bench.py` (see its docstring for the method)",
        "",
        "| model | batch | ferry p50 (ms) | ORT p50 (ms) | ORT / ferry | max rel. diff vs ORT |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in res["rows"]:
        lines.append(f"| {r['model']} | {r['batch']} | {r['ferry_p50_ms']:.2f} | {r['ort_p50_ms']:.2f} | "
                     f"{r['ratio_ort_over_ferry']:.2f}x | {r['max_rel_diff']:.1e} |")
    lines += ["", f"**Geometric mean ORT/ferry: {res['geomean_ort_over_ferry']:.3f}x** "
              "(above 1: ferry is faster).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
