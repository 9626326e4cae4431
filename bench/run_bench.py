#!/usr/bin/env python3
"""Side-by-side benchmark: ferry's CPU backend against ONNX Runtime and OpenVINO, fp32.

For each model and batch size, alternating in one run (R rounds of: ferry, then each
peer, same thread count), measures latency; reports p50 per engine (the best round), the ratios
peer/ferry (> 1: ferry is faster) of those and, per round, of ferry and the peer timed back
to back (their median: a host whose speed drifts between rounds moves both engines of a
round alike), their geometric means, and output agreement (ferry vs ORT on the same seeded
inputs, max |a-b| / max(1,|b|)).

Models: torchvision ResNet-50, MobileNetV2, MobileNetV3-Small, EfficientNet-B0,
RegNetY-400MF, ConvNeXt-T, DenseNet-121, Swin-T, ViT-B/16, a BERT-base encoder (seq
128) and GPT-2 small (seq 128), exported by tests/models/gen/export_models.py. Batch 1
uses the cached full-size models (tests/models/generated/full); other batches use
re-exports with a symbolic batch axis under bench/models/ (made on first use).

    .venv/bin/python bench/run_bench.py                       # all models, batch 1 and 8
    .venv/bin/python bench/run_bench.py --models resnet50 --batches 1 --rounds 1
    .venv/bin/python bench/run_bench.py --modes default no-spin --busy 2
    .venv/bin/python bench/run_bench.py --write bench/RESULTS.md

Engines: ferry `ferry bench --json` (compiled session: optimizer for the cpu target,
oneDNN, own kernels) as a subprocess; ONNX Runtime with all graph optimizations (its
default), intra-op threads = --threads, inter-op 1, sequential; OpenVINO (if
installed) on its CPU plugin with INFERENCE_PRECISION_HINT=f32, the LATENCY hint and
INFERENCE_NUM_THREADS = --threads.

--modes: `default` runs every engine with its default settings (the headline:
ferry's idle threads spin briefly then sleep, src/runtime/wait_policy.h; ORT spins);
`no-spin` has every engine's idle threads sleep (ORT allow_spinning=0,
OMP_WAIT_POLICY=PASSIVE) — a second row, not the headline. --busy N starts N bounded
CPU burners (one busy process each, stopped after the model) for the whole
measurement, as on a shared machine. The fp32 FMA peak of --threads threads
(bench/fma_peak.c) and ResNet-50's fraction of it are printed (an effective rate: direct
convolution's FLOPs over ferry's time, which counts Winograd's savings; --conv-algorithm
direct measures ferry on the peers' algorithm).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
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
CONV_ALGORITHM = "auto"  # ferry bench --conv-algorithm (src/backends/cpu/conv_algorithm.h)

MODELS = ["resnet50", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "regnet_y_400mf", "convnext_tiny",
          "densenet121", "swin_t", "vit_b_16", "bert", "gpt2"]
PEERS = ["ort", "openvino"]


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


def openvino_model(path, threads):
    """OpenVINO's compiled CPU model, fp32 (no bf16 even where AMX exists), latency hint."""
    import openvino as ov

    core = ov.Core()
    cfg = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads}
    return core.compile_model(str(path), "CPU", cfg)


def time_openvino(compiled, feeds, warmup, iters):
    req = compiled.create_infer_request()
    for _ in range(warmup):
        req.infer(feeds)
    lat = []
    for _ in range(iters):
        t0 = time.perf_counter()
        req.infer(feeds)
        lat.append((time.perf_counter() - t0) * 1e3)
    return lat


def have_openvino():
    try:
        import openvino  # noqa: F401
        return True
    except ImportError:
        return False


class Burners:
    """N busy processes (bounded: each exits after `seconds`), as on a shared machine."""

    def __init__(self, n, seconds=900):
        self.procs = [subprocess.Popen([sys.executable, "-c", f"import time\nend = time.time() + {seconds}\n"
                                        "while time.time() < end: pass"]) for _ in range(n)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


def fma_peak_gflops(threads):
    """The fp32 FMA peak of `threads` threads (bench/fma_peak.c, built here with cc)."""
    exe = Path(tempfile.gettempdir()) / "ferry_fma_peak"
    subprocess.run(["cc", "-O2", "-fopenmp", str(REPO / "bench" / "fma_peak.c"), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                         env={**os.environ, "OMP_NUM_THREADS": str(threads)}).stdout
    return float(json.loads(out[out.index("{"):])["gflops"])


def model_flops(path):
    """ferry inspect's FLOP estimate (multiply-add = 2) of the model at batch 1."""
    r = subprocess.run([ferry_bin(), "inspect", str(path), "--json"], capture_output=True, text=True)
    try:
        return float(json.loads(r.stdout)["flops"]["total"])
    except (ValueError, KeyError, TypeError):
        return float("nan")


def time_ort(sess, feeds, warmup, iters):
    for _ in range(warmup):
        sess.run(None, feeds)
    lat = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        lat.append((time.perf_counter() - t0) * 1e3)
    return lat


def shape_args(specs):
    """`--shape NAME=DIMS` for each input spec (the ferry CLI's form)."""
    return [a for s in specs for a in ("--shape", f"{s['name']}={'x'.join(str(d) for d in s['shape'])}")]


def time_ferry(path, specs, batch, threads, warmup, iters):
    cmd = [ferry_bin(), "bench", str(path), "--json", "--threads", str(threads), "--warmup", str(warmup),
           "--iters", str(iters), "--conv-algorithm", CONV_ALGORITHM] + shape_args(specs)
    env = dict(os.environ)
    env.pop("GOMP_SPINCOUNT", None)
    env.pop("OMP_WAIT_POLICY", None)
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


def measure(name, batch, args, peers):
    """One model at one batch: alternating rounds of ferry and each peer; best p50 of each."""
    from common import make_inputs

    path = model_path(name, batch)
    specs = input_specs(name, batch)
    feeds = make_inputs(specs, seed=0)
    sess = ort_session(path, args.threads)
    ov = openvino_model(path, args.threads) if "openvino" in peers else None
    iters = max(5, args.iters // batch) if batch > 1 else args.iters
    p50 = {"ferry": [], **{p: [] for p in peers}}
    f_json = None
    for _ in range(args.rounds):
        f_json = time_ferry(path, specs, batch, args.threads, args.warmup, iters)
        p50["ferry"].append(f_json["latency_ms"]["p50"])
        p50["ort"].append(float(np.percentile(time_ort(sess, feeds, args.warmup, iters), 50)))
        if ov is not None:
            p50["openvino"].append(float(np.percentile(time_openvino(ov, feeds, args.warmup, iters), 50)))
    err, note = agreement(path, sess, feeds)
    best = {k: min(v) for k, v in p50.items()}
    row = {"model": name, "batch": batch, "mode": "no-spin" if not SPIN else "default", "busy": args.busy,
           "ferry_p50_ms": best["ferry"], "ferry_p90_ms": f_json["latency_ms"]["p90"],
           "ferry_peak_rss_mb": f_json["peak_rss_mb"], "reference_steps": f_json.get("reference_steps"),
           "rounds_p50": p50, "max_rel_diff": err, "iters": iters, "note": note}
    for p in peers:
        row[f"{p}_p50_ms"] = best[p]
        row[f"ratio_{p}_over_ferry"] = best[p] / best["ferry"]
        # Each round times ferry and the peer back to back: their ratio within a round survives the host
        # changing speed between rounds, where the best p50 of each engine may come from different rounds.
        row[f"round_ratio_{p}_over_ferry"] = statistics.median(a / f for f, a in zip(p50["ferry"], p50[p]))
    return row


def geomean(xs):
    xs = [x for x in xs if x and x == x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating rounds per model; best p50 kept, and the median of the per-round ratios")
    ap.add_argument("--iters", type=int, default=20, help="timed runs per round at batch 1 (fewer at larger batches)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--peers", nargs="+", default=PEERS, choices=PEERS)
    ap.add_argument("--modes", nargs="+", default=["default"], choices=["default", "no-spin"],
                    help="default: every engine's own settings (the headline); no-spin: idle threads sleep in all")
    ap.add_argument("--conv-algorithm", default="auto", choices=["auto", "direct", "winograd"],
                    help="ferry's fp32 3x3 convolutions (ferry bench --conv-algorithm): auto takes oneDNN's "
                         "Winograd kernels where they gain (AVX-512 only); direct = the peers' algorithm")
    ap.add_argument("--busy", type=int, default=0, help="bounded CPU burner processes running alongside")
    ap.add_argument("--write", metavar="FILE", help="write the markdown report here (e.g. a section for bench/RESULTS.md)")
    ap.add_argument("--json", metavar="FILE", help="write raw results as JSON")
    args = ap.parse_args(argv)
    global SPIN, CONV_ALGORITHM
    peers = [p for p in args.peers if p != "openvino" or have_openvino()]
    if "openvino" in args.peers and "openvino" not in peers:
        print("openvino is not installed: measured against ONNX Runtime only", file=sys.stderr)

    CONV_ALGORITHM = args.conv_algorithm
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = load_avg()
    peak = fma_peak_gflops(args.threads)
    print(f"fp32 FMA peak, {args.threads} threads: {peak:.1f} GFLOP/s", flush=True)
    rows = []
    with Burners(args.busy):
        for mode in args.modes:
            SPIN = mode == "default"
            for name in args.models:
                for batch in args.batches:
                    row = measure(name, batch, args, peers)
                    if name == "resnet50" and batch == 1:
                        row["gflops"] = model_flops(model_path(name, batch)) / row["ferry_p50_ms"] / 1e6
                        row["fraction_of_peak"] = row["gflops"] / peak
                    rows.append(row)
                    peers_text = "   ".join(f"{p} {row[f'{p}_p50_ms']:8.2f} ms ({row[f'ratio_{p}_over_ferry']:4.2f}x)"
                                           for p in peers)
                    print(f"{mode:8s} {name:20s} b{batch:<2d} ferry {row['ferry_p50_ms']:8.2f} ms   {peers_text}   "
                          f"agreement {row['max_rel_diff']:.1e}", flush=True)
    load_after = load_avg()
    geo = {m: {p: geomean([r[f"ratio_{p}_over_ferry"] for r in rows if r["mode"] == m]) for p in peers}
           for m in args.modes}
    geo_rounds = {m: {p: geomean([r[f"round_ratio_{p}_over_ferry"] for r in rows if r["mode"] == m]) for p in peers}
                  for m in args.modes}
    for m, g in geo.items():
        print(f"geometric mean ({m}): " + ", ".join(f"{p}/ferry {v:.3f}x" for p, v in g.items()) +
              "; of the per-round ratios: " + ", ".join(f"{p}/ferry {v:.3f}x" for p, v in geo_rounds[m].items()))
    result = {"date": started.isoformat(timespec="seconds"), "machine": machine(), "versions": versions(),
              "threads": args.threads, "rounds": args.rounds, "busy": args.busy, "peers": peers,
              "conv_algorithm": args.conv_algorithm,
              "fma_peak_gflops": peak, "load_avg_before": load_before, "load_avg_after": load_after, "rows": rows,
              "geomean": geo, "geomean_per_round": geo_rounds}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    if args.write:
        Path(args.write).write_text(markdown(result))
        print(f"wrote {args.write}")
    return 0


def markdown(res):
    v = res["versions"]
    peers = res["peers"]
    lines = [
        "# ferry vs " + " and ".join({"ort": "ONNX Runtime", "openvino": "OpenVINO"}[p] for p in peers) + " — CPU, fp32",
        "",
        f"- date: {res['date']} (UTC)",
        f"- machine: {res['machine']}; fp32 FMA peak ({res['threads']} threads, bench/fma_peak.c): "
        f"{res['fma_peak_gflops']:.1f} GFLOP/s",
        f"- threads: {res['threads']} for every engine; {res['rounds']} alternating rounds per model (best p50 of each engine; `per round`: the median over rounds of peer / ferry timed back to back); "
        f"{res['busy']} busy background processes; ferry's fp32 3x3 convolutions: "
        f"`--conv-algorithm {res.get('conv_algorithm', 'direct')}`",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- load average (1/5/15 min) before: {', '.join(f'{x:.2f}' for x in res['load_avg_before'])}; "
        f"after: {', '.join(f'{x:.2f}' for x in res['load_avg_after'])}",
        "- produced by `bench/run_bench.py` (see its docstring for the method); mode `default` = every engine's "
        "own settings, `no-spin` = idle threads sleep in every engine",
        "",
        "| mode | model | batch | ferry p50 (ms) | " +
        " | ".join(f"{p} p50 (ms) | {p} / ferry | per round" for p in peers) + " | max rel. diff vs ORT | reference steps |",
        "| --- | --- | ---: | ---: | " + " | ".join("---: | ---: | ---:" for _ in peers) + " | ---: | ---: |",
    ]
    for r in res["rows"]:
        cells = " | ".join(f"{r[f'{p}_p50_ms']:.2f} | {r[f'ratio_{p}_over_ferry']:.2f}x | "
                           f"{r.get(f'round_ratio_{p}_over_ferry', float('nan')):.2f}x" for p in peers)
        lines.append(f"| {r['mode']} | {r['model']} | {r['batch']} | {r['ferry_p50_ms']:.2f} | {cells} | "
                     f"{r['max_rel_diff']:.1e} | {r.get('reference_steps', '?')} |")
    lines.append("")
    for m, g in res["geomean"].items():
        per_round = res.get("geomean_per_round", {}).get(m, {})
        lines.append(f"**Geometric mean ({m}):** " + ", ".join(f"{p}/ferry {x:.3f}x" for p, x in g.items()) +
                     " (above 1: ferry is faster); of the per-round ratios: " +
                     ", ".join(f"{p}/ferry {x:.3f}x" for p, x in per_round.items()) + ".")
    for r in res["rows"]:
        if "fraction_of_peak" in r and r["mode"] == "default":
            effective = res.get("conv_algorithm", "direct") != "direct"
            lines.append(f"\nResNet-50 batch 1: {r['gflops']:.1f} GFLOP/s = {100 * r['fraction_of_peak']:.0f}% of "
                         "the fp32 FMA peak" + (" (effective: direct convolution's FLOPs over ferry's time; its "
                                                "Winograd steps do fewer)." if effective else "."))
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
