#!/usr/bin/env python3
"""Writes a corpus of malformed models and inputs, and a manifest of what ferry must say.

    gen_bad_inputs.py OUT_DIR [--only NAME...] [--list]

Every case lives in OUT_DIR/<case>/ (so external-data cases have their own
root directory; OUT_DIR/outside/ holds the files they try to reach). The
manifest OUT_DIR/manifest.json lists, per case:

    name, description
    model        model path, relative to OUT_DIR
    inputs       {input name: .npy path relative to OUT_DIR} passed as --input
    extra_args   further command-line arguments for `ferry run`
    file         the file the error line must name (default: the model)
    run          what `ferry run` must do:
                   exit        allowed exit codes (2: model/input error, 1: usage error, 0: runs)
                   fragments   the error line contains at least one of these (case-insensitive)
                   mentions    ... and every one of these (a list inside means any one of it)
    inspect      the same for `ferry inspect MODEL`, or null where inspect is not meaningful
                 (a bad .npy input does not concern inspect)
    skip         reason the case could not be built here (e.g. no hard links), else absent
    model_not_a_file  true where the model path is meant to be missing or a directory

Models are written with onnx.helper and raw byte edits; none goes through the
ONNX checker, which would reject most of them.

The cases live in cases/, one module per bug class (cases/registry.py has the
@case decorator, Ctx and the expectation helpers, cases/builders.py the small
models they share), in tf_cases.py for TensorFlow and in torch_cases.py for PyTorch .pt2 archives. This file is the entry
point: generate() and the command line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import cases  # noqa: F401  (registers the ONNX cases)
import tf_cases  # noqa: F401  (registers the TensorFlow cases)
import torch_cases  # noqa: F401  (registers the PyTorch .pt2 cases)
from cases.registry import CASES, Ctx


def generate(out_dir, only=None):
    """Writes every case (or `only` those) and the manifest; returns the manifest dict."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    for name in only or CASES:
        shutil.rmtree(out_dir / name, ignore_errors=True)
        entry = CASES[name](Ctx(out_dir, name))
        entry = {"name": name, "description": (CASES[name].__doc__ or "").strip(), "inputs": {}, "extra_args": [],
                 **entry}
        entry.setdefault("file", entry["model"])
        entries.append(entry)
    manifest = {"cases": entries}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=list(CASES))
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(CASES))
        return 0
    if not args.out_dir:
        ap.error("OUT_DIR is required")
    for c in generate(args.out_dir, args.only)["cases"]:
        print(f"{c['name']:32s} {c['model']}" + (f"  (skipped: {c['skip']})" if c.get("skip") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
