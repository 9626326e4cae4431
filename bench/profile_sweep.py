#!/usr/bin/env python3
"""Which implementation runs each model's hottest steps (issue 13: "no reference kernel in the top 20").

    .venv/bin/python bench/profile_sweep.py [--models resnet50 ...] [--real] [--top 20]
        [--json bench/profile_sweep.json] [--markdown bench/profile_sweep.md]

For every model of the generated suite (bench/run_bench.py's list; exported on first use) and,
with --real, every model of bench/real_models (collected by bench/real_models/collect.py), it runs
`ferry bench MODEL --profile --top N` (real models on their manifest inputs) and marks each of the top N steps:

- reference: ferry's reference kernels (`ref_<Op>`) and oneDNN's reference implementations
  (`[ref:any]`, `[ref_...]`) — the slow fallbacks the issue asks to see gone;
- generic: ferry's own portable kernels (`..._generic`, no SIMD dispatch row for this op or dtype).

It prints a table per model with those steps and writes the JSON / markdown summary. The step
order is by median step time, so run it on a quiet machine when the order matters; which
implementation runs does not depend on the load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "bench" / "real_models"))
sys.path.insert(0, str(REPO / "tests" / "models" / "gen"))

import run_bench  # noqa: E402
import run as real_run  # noqa: E402  (bench/real_models/run.py)

STEP = re.compile(r"^\s*([\d.]+) ms\s+([\d.]+)%\s+(\S+) '([^']*)'\s+(\S+)\s+(.*)$")


def classify(kernel: str) -> str | None:
    """'reference', 'generic' or None (a SIMD / oneDNN implementation)."""
    if kernel.startswith("ref_") or "[ref:" in kernel or "[ref_" in kernel:
        return "reference"
    if "_generic" in kernel.split("[")[0]:
        return "generic"
    return None


def ferry_bin() -> str:
    return os.environ.get("FERRY_BIN", str(REPO / "build" / "ferry"))


def profile(path: Path, extra: list[str], top: int, threads: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [ferry_bin(), "bench", str(path), "--threads", str(threads), "--warmup", "2", "--iters", "10",
               "--top", str(top), "--profile", str(Path(tmp) / "trace.json")] + extra
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip().splitlines()[-1:] or ["failed"], "cmd": cmd}
    steps = []
    for m in map(STEP.match, (r.stdout + r.stderr).splitlines()):
        if m:
            ms, pct, ops, nodes, kernel, shapes = m.groups()
            steps.append({"ms": float(ms), "pct": float(pct), "op": ops, "node": nodes, "kernel": kernel,
                          "shapes": shapes, "class": classify(kernel)})
    return {"top_steps": steps[:top]}


def suite_models(names: list[str]) -> list[tuple[str, Path, list[str]]]:
    out = []
    for n in names:
        path = run_bench.model_path(n, 1)
        out.append((n, path, run_bench.shape_args(run_bench.input_specs(n, 1))))
    return out


def real_models() -> list[tuple[str, Path, list[str], dict]]:
    import manifest

    entries = manifest.load()
    by_id = {e["id"]: e for e in entries}
    return [(e["id"], Path(manifest.model_file(e)), [], dict(e, by_id=by_id)) for e in entries
            if Path(manifest.model_file(e)).exists()]


def profile_real(name: str, path: Path, entry: dict, top: int, threads: int) -> dict:
    """On the manifest's inputs (as bench/real_models/run.py times it: a model may branch on an
    input's value); a `repair = true` model as `ferry convert --repair` wrote it."""
    import inputs
    import manifest
    import numpy as np

    with tempfile.TemporaryDirectory(prefix=f"ferry_sweep_{name}_") as tmp:
        fpath, rep = real_run.repaired(path, entry, tmp, 900)
        if fpath is None:
            return {"error": [f"convert --repair failed: {rep and rep.get('error')}"]}
        feeds = inputs.build_inputs(entry, entry["by_id"], manifest.model_file)
        (Path(tmp) / "inputs").mkdir()
        for n, a in feeds.items():
            np.save(Path(tmp) / "inputs" / real_run.file_names([n])[0], a)
        return profile(Path(fpath), real_run.input_args(feeds, tmp), top, threads)


def markdown(res: dict, top: int) -> str:
    lines = [f"# Top-{top} steps on reference or generic kernels (`bench/profile_sweep.py`)", "",
             f"{res['machine']}, {res['threads']} threads, load average {res['load_start']:.2f} before / "
             f"{res['load_end']:.2f} after.", "",
             "| model | steps | reference in top | generic in top | hottest flagged step |", "| --- | --- | --- | --- | --- |"]
    for name, p in res["models"].items():
        if "error" in p:
            lines.append(f"| {name} | error: {' '.join(p['error'])} | | | |")
            continue
        ref = [s for s in p["top_steps"] if s["class"] == "reference"]
        gen = [s for s in p["top_steps"] if s["class"] == "generic"]
        hot = (ref + gen)[:1]
        desc = f"{hot[0]['pct']:.1f}% {hot[0]['op']} {hot[0]['kernel']} {hot[0]['shapes']}" if hot else ""
        lines.append(f"| {name} | {len(p['top_steps'])} | {len(ref)} | {len(gen)} | {desc.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def machine() -> str:
    """The CPU's model name and the ISA extensions ferry dispatches on (from /proc/cpuinfo)."""
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return platform.processor()
    name = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("model name")), "?")
    flags = set(next((ln.split(":", 1)[1].split() for ln in text.splitlines() if ln.startswith("flags")), []))
    isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile") if f in flags]
    return f"{name} ({', '.join(isa) or 'no AVX2'})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", default=run_bench.MODELS, choices=run_bench.MODELS)
    ap.add_argument("--real", action="store_true", help="also every model of bench/real_models")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    a = ap.parse_args()
    todo = [(n, p, x, None) for n, p, x in suite_models(a.models)] + (real_models() if a.real else [])
    res = {"machine": machine(), "threads": a.threads, "load_start": os.getloadavg()[0], "models": {}}
    flagged = 0
    for name, path, extra, entry in todo:
        p = profile_real(name, path, entry, a.top, a.threads) if entry else profile(path, extra, a.top, a.threads)
        res["models"][name] = p
        bad = [s for s in p.get("top_steps", []) if s["class"]]
        flagged += sum(s["class"] == "reference" for s in bad)
        print(f"{name}: " + (p["error"][0] if "error" in p else f"{len(bad)} flagged of {len(p['top_steps'])}"))
        for s in bad:
            print(f"    {s['class']:9} {s['pct']:5.1f}% {s['op']} '{s['node']}' {s['kernel']} {s['shapes']}")
    res["load_end"] = os.getloadavg()[0]
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n")
    if a.markdown:
        a.markdown.write_text(markdown(res, a.top))
    print(f"reference steps in the top {a.top}: {flagged}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
