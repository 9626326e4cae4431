#!/usr/bin/env python3
"""Run the real-model group through ferry, one model at a time, against ONNX Runtime.

    .venv/bin/python bench/real_models/collect.py                       # first: copy + verify the models
    .venv/bin/python bench/real_models/run.py --no-spin                 # everything; a loaded machine: --no-spin
    .venv/bin/python bench/real_models/run.py --quick                   # import + match only, no timing
    .venv/bin/python bench/real_models/run.py --models mtcnn_pnet oww_embedding --rounds 3
    .venv/bin/python bench/real_models/run.py --json bench/real_models/results.json --markdown bench/real_models/results.md

Per model (manifest.toml, inputs built by inputs.py as the package's own code builds them):
1. `ferry inspect --json`: imports or not; every unsupported op with its reason.
2. `ferry run --backend cpu --threads T` and `ferry run --backend reference` on the manifest's
   inputs, against ONNX Runtime (CPU, graph optimizations disabled) on the same arrays. Per output:
   max_abs, max_rel = max |d| / max(|ref|, 1e-6), and agreement = max |d| / max(1, |ref|), the
   measure of bench/run_bench.py; a model matches when agreement <= 1e-4 on every output (integer
   outputs exact) with the same shapes, or the manifest's `tolerance` where its `tolerance_why`
   says why 1e-4 cannot hold. Beside it, ORT with all graph optimizations against ORT without
   ("ORT opt vs ORT"): the model's own float noise under a change of summation order. A mismatch
   on the cpu backend is then located with `ferry validate --per-layer` (first divergent node;
   validate's subject is the reference interpreter on the optimized graph).
3. Timing (skipped by --quick): R alternating rounds of `ferry bench --json --threads T` (same
   shapes; ferry bench takes no --input, so its values are seeded random ones) and an ONNX Runtime
   InferenceSession (all graph optimizations, intra_op_num_threads T, the manifest's inputs); p50
   per round, the best round kept; ratio = ORT p50 / ferry p50 (above 1: ferry faster).
4. For models where ferry is slower than ORT (ratio < 1, or --profile-all): `ferry bench --profile`,
   the top steps with their kernels, step time per kernel[implementation], and the share of step
   time on reference implementations: ferry's `ref_<Op>` kernels and oneDNN primitives whose
   implementation is oneDNN's reference one (`[ref:any]`).

Every ferry call has a timeout; a signal or a timeout is reported as a crash / hang with the
command line. Results: JSON (--json) and a markdown table (--markdown); both default to
bench/real_models/results.{json,md}.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import inputs  # noqa: E402
import manifest  # noqa: E402

TOLERANCE = 1e-4  # agreement = max |ferry - ort| / max(1, |ort|), as in bench/run_bench.py
SPIN = True


def ferry_bin():
    return os.environ.get("FERRY_BIN", str(manifest.REPO / "build" / "ferry"))


def call(args, timeout, env=None):
    """Run ferry; {rc, out, err, secs, cmd, crash}. crash: 'signal N' / 'timeout after S s' / None."""
    cmd = [ferry_bin()] + [str(a) for a in args]
    e = dict(os.environ, **(env or {}))
    if not SPIN:
        e["OMP_WAIT_POLICY"] = "PASSIVE"
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
        rc, out, err = r.returncode, r.stdout, r.stderr
        crash = f"signal {-rc}" if rc < 0 else None
    except subprocess.TimeoutExpired as ex:
        rc, out, err = None, ex.stdout or "", ex.stderr or ""
        out, err = (x.decode(errors="replace") if isinstance(x, bytes) else x for x in (out, err))
        crash = f"timeout after {timeout} s"
    return {"rc": rc, "out": out, "err": err, "secs": time.perf_counter() - t0, "crash": crash,
            "cmd": shlex.join(cmd)}


def first_error(err):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln.strip()
    return lines[-1].strip() if lines else ""


def shape_args(entry):
    args = []
    for name, spec in entry["inputs"].items():
        dims = "x".join(str(d) for d in spec["shape"]) if spec["shape"] else "scalar"
        args += ["--shape", f"{name}={dims}"]
    return args


def inspect(path, timeout, repair=False):
    r = call(["inspect", "--json", path] + (["--repair"] if repair else []), timeout)
    res = {"rc": r["rc"], "crash": r["crash"], "error": first_error(r["err"]) if r["rc"] else None}
    try:
        j = json.loads(r["out"])
    except ValueError:
        j = {}
    cov = j.get("coverage") or {}
    res.update({"imports": r["rc"] == 0, "num_nodes": j.get("num_nodes"),
                "num_source_nodes": j.get("num_source_nodes"), "opsets": j.get("opsets"),
                "shape_inference": j.get("shape_inference"),
                "source_op_histogram": j.get("source_op_histogram"),
                "unsupported": cov.get("unsupported", []),
                "flops": (j.get("flops") or {}).get("total")})
    if r["crash"]:
        res["cmd"] = r["cmd"]
    return res


def file_names(names):
    """ferry run --output-dir's file name for each output: [A-Za-z0-9._-] kept, others '_', case clashes _1, _2."""
    seen, out = {}, []
    for n in names:
        base = re.sub(r"[^A-Za-z0-9._-]", "_", n)
        k = seen.get(base.lower(), 0)
        seen[base.lower()] = k + 1
        out.append(f"{base}_{k}" if k else base)
    return [f"{b}.npy" for b in out]


def compare(got, ref, tol=TOLERANCE):
    """Metrics of one output; ok when shapes agree and agreement <= tol (integers: exact)."""
    if got.shape != ref.shape:
        return {"ok": False, "why": f"shape {list(got.shape)} vs ORT {list(ref.shape)}"}
    if ref.size == 0:
        return {"ok": True, "max_abs": 0.0, "max_rel": 0.0, "agreement": 0.0}
    g, r = got.astype(np.float64), ref.astype(np.float64)
    fin = np.isfinite(r)
    if not np.array_equal(np.isfinite(g), fin) or not np.array_equal(np.isnan(g), np.isnan(r)):
        return {"ok": False, "why": f"non-finite mismatch: ferry {int((~np.isfinite(g)).sum())} vs ORT "
                                    f"{int((~fin).sum())} non-finite values"}
    d = np.abs(g - r)[fin]
    rf = np.abs(r[fin])
    m = {"max_abs": float(d.max(initial=0)), "max_rel": float((d / np.maximum(rf, 1e-6)).max(initial=0)),
         "agreement": float((d / np.maximum(1.0, rf)).max(initial=0))}
    if ref.dtype.kind in "iub":
        m["ok"] = m["max_abs"] == 0
    else:
        m["ok"] = m["agreement"] <= tol
    if not m["ok"]:
        i = int(np.argmax(np.where(fin, np.abs(g - r) / np.maximum(1.0, np.abs(r)), 0)))
        m["worst"] = {"index": list(np.unravel_index(i, ref.shape)), "ferry": float(g.flat[i]), "ort": float(r.flat[i])}
    return m


def tolerance(entry):
    """The manifest's `tolerance` (with its `tolerance_why`) where 1e-4 cannot hold, else 1e-4."""
    return float(entry.get("tolerance", TOLERANCE))


def ort_self_agreement(path, feeds, ref):
    """Agreement of ORT with all graph optimizations against ORT without: the model's own float noise."""
    sess = inputs.ort_session(path, threads=1, optimize=True)
    got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    worst = 0.0
    for k, r in ref.items():
        if r.dtype.kind == "f" and r.size:
            d = np.abs(got[k].astype(np.float64) - r) / np.maximum(1.0, np.abs(r))
            worst = max(worst, float(np.nanmax(d)))
    return worst


def repaired(path, entry, tmp, timeout):
    """The file ferry runs: for a manifest `repair = true` model, `ferry convert --repair` of it
    (ORT still runs the original); (path, {rc, error, repairs}) — path None when convert failed."""
    if not entry.get("repair"):
        return path, None
    out, report = Path(tmp) / "repaired.onnx", Path(tmp) / "repair_report.json"
    r = call(["convert", path, "-o", out, "--repair", "--report", report] + shape_args(entry), timeout)
    res = {"rc": r["rc"], "error": first_error(r["err"]) if r["rc"] else None}
    try:
        res["repairs"] = [{k: x.get(k) for k in ("node_name", "rule", "became")}
                          for x in json.loads(report.read_text()).get("repairs", [])]
    except (OSError, ValueError):
        pass
    return (out if r["rc"] == 0 else None), res


def input_args(feeds, tmp):
    """`--input NAME=FILE.npy` for every manifest input (saved under tmp/inputs by run_model): ferry
    runs and times the values ORT gets (a model may branch on one, as silero-vad on its sample rate)."""
    args = []
    for name in feeds:
        args += ["--input", f"{name}={Path(tmp) / 'inputs' / file_names([name])[0]}"]
    return args


def run_outputs(path, entry, feeds, ref, backend, threads, tmp, timeout):
    """ferry run on the manifest inputs; compared output by output with ORT's."""
    d = Path(tmp) / f"out_{backend}"
    args = ["run", path, "--backend", backend, "--output-dir", d]
    if backend == "cpu":
        args += ["--threads", threads]
    r = call(args + input_args(feeds, tmp), timeout)
    res = {"rc": r["rc"], "secs": round(r["secs"], 3), "crash": r["crash"]}
    if r["crash"]:
        res["cmd"] = r["cmd"]
    if r["rc"] != 0:
        res.update({"runs": False, "matches": False, "error": first_error(r["err"]) or f"exit {r['rc']}"})
        return res
    outs = {}
    for name, fname in zip(ref, file_names(list(ref))):
        f = d / fname
        outs[name] = compare(np.load(f), ref[name], tolerance(entry)) if f.exists() else \
            {"ok": False, "why": f"no {fname} written"}
    res.update({"runs": True, "outputs": outs, "matches": all(o["ok"] for o in outs.values()),
                "agreement": max((o.get("agreement", math.inf) for o in outs.values()), default=0.0),
                "note": first_error(r["err"]) if r["err"].strip() else None})
    return res


def first_divergence(path, tmp, timeout):
    """`ferry validate --per-layer` on the same inputs: the first divergent node, or why not found."""
    npz = Path(tmp) / "inputs.npz"
    j = Path(tmp) / "validate.json"
    r = call(["validate", path, "--inputs", npz, "--per-layer", "--atol", TOLERANCE, "--rtol", TOLERANCE,
              "--json", j], timeout)
    if r["crash"]:
        return {"error": f"ferry validate: {r['crash']}", "cmd": r["cmd"]}
    try:
        rep = json.loads(j.read_text())
    except (OSError, ValueError):
        return {"error": first_error(r["err"]) or f"ferry validate exit {r['rc']}"}
    for s in rep.get("samples", []):
        fd = (s.get("per_layer") or {}).get("first_divergence")
        if fd:
            keep = ("node", "op", "tensor", "problem", "shape")
            return {"subject": rep.get("subject"), "first_divergent": {k: fd.get(k) for k in keep} | {
                "max_abs": (fd.get("metrics") or {}).get("max_abs")}}
    return {"rc": r["rc"], "subject": rep.get("subject"), "note": "no divergent intermediate found"}


def ort_timing(path, feeds, threads, warmup, iters):
    sess = inputs.ort_session(path, threads=threads, optimize=True, spin=SPIN)
    for _ in range(warmup):
        sess.run(None, feeds)
    lat = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        lat.append((time.perf_counter() - t0) * 1e3)
    return float(np.percentile(lat, 50))


def timing(path, entry, feeds, threads, rounds, cpu_secs, timeout, tmp, ferry_path=None):
    """Alternating rounds of ferry bench (on ferry_path, default path) and ORT (on path); iterations
    sized by how long one ferry run took."""
    iters, warmup = (30, 5) if cpu_secs < 0.5 else (10, 2) if cpu_secs < 3 else (5, 1)
    f_p50, o_p50 = [], []
    for _ in range(rounds):
        r = call(["bench", ferry_path or path, "--json", "--threads", threads, "--warmup", warmup, "--iters", iters]
                 + input_args(feeds, tmp), timeout)
        if r["rc"] != 0:
            return {"error": r["crash"] or first_error(r["err"]), "cmd": r["cmd"]}
        f_p50.append(json.loads(r["out"])["latency_ms"]["p50"])
        o_p50.append(ort_timing(path, feeds, threads, warmup, iters))
    f, o = min(f_p50), min(o_p50)
    return {"ferry_p50_ms": f, "ort_p50_ms": o, "ratio_ort_over_ferry": o / f, "ferry_rounds_p50": f_p50,
            "ort_rounds_p50": o_p50, "iters": iters, "warmup": warmup}


def is_reference(kernel):
    """ferry's reference kernels (ref_Op) and oneDNN's reference implementations (impl name ref:...)."""
    return kernel.startswith("ref_") or "[ref:" in kernel or "[ref_" in kernel


STEP = re.compile(r"^\s*([\d.]+) ms\s+([\d.]+)%\s+(\S+) '([^']*)'\s+(\S+)\s+(.*)$")


def profile(path, feeds, threads, tmp, timeout, top=8):
    trace = Path(tmp) / "trace.json"
    r = call(["bench", path, "--threads", threads, "--warmup", 1, "--iters", 5, "--profile", trace, "--top", top]
             + input_args(feeds, tmp), timeout)
    if r["rc"] != 0:
        return {"error": r["crash"] or first_error(r["err"])}
    steps = [dict(zip(("ms", "pct", "ops", "nodes", "kernel", "shapes"), m.groups()))
             for m in map(STEP.match, r["out"].splitlines()) if m]
    for s in steps:
        s["ms"], s["pct"] = float(s["ms"]), float(s["pct"])
    by_kernel, total = {}, 0.0
    try:
        events = json.loads(trace.read_text())
        events = events["traceEvents"] if isinstance(events, dict) else events
        for ev in events:
            fam = ev.get("args", {}).get("kernel", "?").split("+")[0]  # kernel[impl], epilogues dropped
            by_kernel[fam] = by_kernel.get(fam, 0.0) + ev.get("dur", 0.0) / 1e3
            total += ev.get("dur", 0.0) / 1e3
    except (OSError, ValueError, KeyError):
        pass
    ref_ms = sum(v for k, v in by_kernel.items() if is_reference(k))
    return {"top_steps": steps[:top], "trace_total_ms": total, "reference_kernel_ms": ref_ms,
            "reference_kernel_share": ref_ms / total if total else None,
            "by_kernel_ms": dict(sorted(by_kernel.items(), key=lambda kv: -kv[1])[:12]),
            "reference_kernels": sorted({s["kernel"] for s in steps if is_reference(s["kernel"])})}


def run_model(entry, by_id, args):
    path = manifest.model_file(entry)
    if path.resolve().is_relative_to(Path.cwd()):
        path = path.resolve().relative_to(Path.cwd())  # shorter paths in ferry's error lines
    row = {"id": entry["id"], "package": entry["package"], "version": entry["version"], "task": entry["task"],
           "bytes": entry["bytes"]}
    if not path.exists():
        row["status"] = "missing (run collect.py)"
        return row
    row["inspect"] = inspect(path, args.timeout, repair=bool(entry.get("repair")))
    with tempfile.TemporaryDirectory(prefix=f"ferry_real_{entry['id']}_") as tmp:
        fpath, row["repair"] = repaired(path, entry, tmp, args.timeout)
        if fpath is None:
            row["status"] = "repair fails"
            return row
        feeds = inputs.build_inputs(entry, by_id, manifest.model_file)
        (Path(tmp) / "inputs").mkdir()
        for name, a in feeds.items():
            np.save(Path(tmp) / "inputs" / file_names([name])[0], a)
        np.savez(Path(tmp) / "inputs.npz", **feeds)
        ref = inputs.ort_run(path, feeds)
        row["inputs"] = {k: {"shape": list(v.shape), "dtype": v.dtype.name} for k, v in feeds.items()}
        row["tolerance"] = tolerance(entry)
        row["ort_self_agreement"] = ort_self_agreement(path, feeds, ref)
        row["cpu"] = run_outputs(fpath, entry, feeds, ref, "cpu", args.threads, tmp, args.timeout)
        row["reference"] = run_outputs(fpath, entry, feeds, ref, "reference", args.threads, tmp, args.timeout)
        if row["cpu"].get("runs") and not row["cpu"]["matches"] and not args.quick:
            row["cpu"]["divergence"] = first_divergence(fpath, tmp, args.timeout)
        if row["cpu"].get("runs") and not args.quick:
            row["timing"] = timing(path, entry, feeds, args.threads, args.rounds, row["cpu"]["secs"], args.timeout, tmp,
                                   ferry_path=fpath)
            ratio = row["timing"].get("ratio_ort_over_ferry")
            if ratio is not None and (ratio < 1 or args.profile_all):
                row["profile"] = profile(fpath, feeds, args.threads, tmp, args.timeout)
    row["status"] = status(row)
    return row


def status(row):
    ins, cpu = row["inspect"], row.get("cpu", {})
    if ins.get("crash") or cpu.get("crash") or row.get("reference", {}).get("crash"):
        return "CRASH"
    if not ins["imports"]:
        return "import fails"
    if not cpu.get("runs"):
        return "cpu run fails"
    return "matches ORT" if cpu["matches"] else "mismatch"


def cause(row):
    """The first error line and the op it names, for the table."""
    ins, cpu = row.get("inspect", {}), row.get("cpu", {})
    if ins.get("unsupported"):
        ops = sorted({(u["domain"] + "." if u["domain"] else "") + u["op_type"] for u in ins["unsupported"]})
        return f"unsupported: {', '.join(ops)} ({len(ins['unsupported'])} nodes)"
    for r in (ins, cpu, row.get("reference", {})):
        if r.get("crash"):
            return f"{r['crash']}: `{r.get('cmd', '')}`"
    if ins.get("error"):
        return ins["error"]
    if cpu.get("error"):
        return cpu["error"]
    if cpu.get("runs") and not cpu["matches"]:
        bad = [f"{k}: {v.get('why') or 'agreement %.1e' % v['agreement']}" for k, v in cpu["outputs"].items()
               if not v["ok"]]
        fd = (cpu.get("divergence") or {}).get("first_divergent")
        where = f"; `ferry validate --per-layer` (reference interpreter): first divergent node '{fd['node']}' ({fd['op']}), " \
            f"{fd['problem']}" if fd else ""
        if row.get("tolerance", TOLERANCE) != TOLERANCE:
            where += f"; tolerance {row['tolerance']:g} (manifest)"
        return "; ".join(bad) + where
    return ""


def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) and not (isinstance(x, float) and math.isnan(x)) else "-"


def markdown(res):
    lines = [
        f"- date: {res['date']} (UTC); machine: {res['machine']}",
        f"- threads {res['threads']} for both engines, {res['rounds']} alternating rounds (best p50 kept); "
        f"idle threads {'spin (defaults)' if res['spin'] else 'sleep in both engines (--no-spin)'}",
        "- agreement = max |ferry - ORT| / max(1, |ORT|) over every output, ORT with graph optimizations disabled "
        "as the reference; pass <= 1e-4 (or the manifest's tolerance); *ORT opt vs ORT*: the same measure for ORT "
        "with all optimizations against it (the model's own float noise)",
        f"- load average (1/5/15 min) before: {', '.join(f'{x:.2f}' for x in res['load_avg_before'])}; "
        f"after: {', '.join(f'{x:.2f}' for x in res['load_avg_after'])}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()),
        "",
        "| model | package | imports | cpu vs ORT | reference vs ORT | ORT opt vs ORT | ferry p50 ms | ORT p50 ms | ORT / ferry | first error / cause |",
        "| --- | --- | :---: | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in res["rows"]:
        def match(b):
            b = r.get(b, {})
            if not b:
                return "-"
            if not b.get("runs"):
                return "fails"
            return ("yes " if b["matches"] else "**no** ") + fmt(b.get("agreement"), ".1e")
        t = r.get("timing", {})
        lines.append(
            f"| {r['id']} | {r['package']} {r['version']} | {'yes' if r.get('inspect', {}).get('imports') else '**no**'} "
            f"| {match('cpu')} | {match('reference')} | {fmt(r.get('ort_self_agreement'), '.1e')} | {fmt(t.get('ferry_p50_ms'), '.2f')} | {fmt(t.get('ort_p50_ms'), '.2f')} "
            f"| {fmt(t.get('ratio_ort_over_ferry'), '.2f')}{'x' if 'ratio_ort_over_ferry' in t else ''} "
            f"| {cause(r).replace('|', '/')} |")
    ratios = [r["timing"]["ratio_ort_over_ferry"] for r in res["rows"] if "ratio_ort_over_ferry" in r.get("timing", {})]
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        lines += ["", f"Geometric mean ORT/ferry over the {len(ratios)} timed models: {geo:.3f}x "
                      f"(above 1: ferry faster); {sum(x < 0.8 for x in ratios)} below 0.8x."]
    n = len(res["rows"])
    count = lambda s: sum(r["status"] == s for r in res["rows"])
    lines += [f"Of {n} models: {sum(r.get('inspect', {}).get('imports', False) for r in res['rows'])} import, "
              f"{count('matches ORT')} match ORT on the cpu backend, {count('mismatch')} mismatch, "
              f"{count('cpu run fails')} fail to run, {count('import fails')} fail to import, {count('CRASH')} crash."]
    profiled = [r for r in res["rows"] if r.get("profile", {}).get("top_steps")]
    if profiled:
        lines += ["", "Top steps of the models where ferry is slower (`ferry bench --profile`, median per step):", ""]
        for r in profiled:
            p = r["profile"]
            share = p.get("reference_kernel_share")
            lines.append(f"- **{r['id']}** ({fmt(p['trace_total_ms'], '.2f')} ms in steps; "
                         f"{fmt(100 * share if share is not None else None, '.0f')}% on reference kernels):")
            for s in p["top_steps"][:5]:
                lines.append(f"  - {s['ms']:.3f} ms {s['pct']:.1f}% {s['ops']} `{s['nodes']}` {s['kernel']} {s['shapes']}")
    return "\n".join(lines) + "\n"


def versions():
    import onnxruntime

    v = subprocess.run([ferry_bin(), "--version"], capture_output=True, text=True).stdout.strip()
    return {"ferry": v.removeprefix("ferry "), "onnxruntime": onnxruntime.__version__, "numpy": np.__version__,
            "python": platform.python_version()}


def machine():
    cpu = platform.processor()
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name"))
        flags = next(ln for ln in open("/proc/cpuinfo") if ln.startswith("flags")).split()
        isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "pre-AVX2"
    except (OSError, StopIteration):
        isa = "?"
    return f"{cpu} ({isa}), {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", metavar="ID", help="only these manifest ids")
    ap.add_argument("--quick", action="store_true", help="import + match only: no timing, profile or per-layer search")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=900, help="seconds per ferry call")
    ap.add_argument("--profile-all", action="store_true", help="profile every timed model, not only the slower ones")
    ap.add_argument("--no-spin", action="store_true", help="idle worker threads sleep in both engines (loaded machine)")
    ap.add_argument("--json", default=str(HERE / "results.json"))
    ap.add_argument("--markdown", default=str(HERE / "results.md"))
    args = ap.parse_args(argv)
    global SPIN
    SPIN = not args.no_spin
    try:
        by_id, todo = manifest.selection(args.models)
    except ValueError as e:
        ap.error(str(e))
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
           "versions": versions(), "threads": args.threads, "rounds": args.rounds, "spin": SPIN, "quick": args.quick,
           "tolerance": TOLERANCE, "load_avg_before": os.getloadavg(), "rows": []}
    for e in todo:
        t0 = time.time()
        row = run_model(e, by_id, args)
        row["wall_s"] = round(time.time() - t0, 1)
        res["rows"].append(row)
        t = row.get("timing", {})
        ratio = f"  ORT/ferry {t['ratio_ort_over_ferry']:.2f}x" if "ratio_ort_over_ferry" in t else ""
        print(f"{e['id']:28s} {row['status']:14s}{ratio}  {cause(row)[:110]}  ({row['wall_s']} s)", flush=True)
        res["load_avg_after"] = os.getloadavg()
        Path(args.json).write_text(json.dumps(res, indent=1, default=str))  # after every model: partial runs survive
    Path(args.markdown).write_text(markdown(res))
    print(f"wrote {args.json} and {args.markdown}")
    return 1 if any(r["status"] == "CRASH" for r in res["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
