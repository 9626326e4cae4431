"""The real-model manifest (manifest.toml): loading it, and where each model's files are.

    from manifest import load, models_dir, model_file, source_file
    entries = load()                       # [dict], one per [[model]], in file order
    model_file(entries[0])                 # bench/models/real/<id>.onnx (what collect.py wrote)
    source_file(entries[0])                # the file inside the installed package
"""
from __future__ import annotations

import importlib.metadata
import os
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MANIFEST = HERE / "manifest.toml"


def load(path=MANIFEST):
    with open(path, "rb") as f:
        entries = tomllib.load(f)["model"]
    ids = [e["id"] for e in entries]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"{path}: duplicate model ids {sorted(dup)}")
    for e in entries:
        e.setdefault("inputs", {})
    return entries


def models_dir():
    """Where collect.py puts the models (ignored by git via /bench/models/); FERRY_REAL_MODELS overrides."""
    return Path(os.environ.get("FERRY_REAL_MODELS", REPO / "bench" / "models" / "real"))


def model_file(entry):
    return models_dir() / f"{entry['id']}.onnx"


def installed_version(package):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def source_file(entry):
    """The model file inside the installed package, or None when the package (or the file) is not there."""
    try:
        dist = importlib.metadata.distribution(entry["package"])
    except importlib.metadata.PackageNotFoundError:
        return None
    p = Path(dist.locate_file(entry["path"]))
    return p if p.is_file() else None


def benchmarked(entries):
    """The entries that are models of the group (not helpers that only make another model's inputs)."""
    return [e for e in entries if not e.get("helper")]


def selection(ids=None):
    """(every entry by id, the benchmarked entries to run: those named by `ids`, else all);
    ValueError names ids the manifest does not have."""
    entries = load()
    by_id = {e["id"]: e for e in entries}
    todo = benchmarked(entries)
    if ids:
        unknown = set(ids) - set(by_id)
        if unknown:
            raise ValueError(f"unknown model ids: {sorted(unknown)}")
        todo = [e for e in todo if e["id"] in ids]
    return by_id, todo
