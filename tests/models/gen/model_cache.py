"""The model cache and the test environment, shared by tests/models/*.py.

Models are generated on demand into a cache, tests/models/generated/{small,full,onnx}/
(gitignored; override with FERRY_MODELS_DIR), and regenerated when a generator
source changes (the sidecar JSON records a hash of the generator files).

FERRY_BIN names the ferry binary (default: build/ferry). Under CI=true a
missing binary or Python package fails the test instead of skipping it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

GEN = Path(__file__).resolve().parent
REPO = GEN.parents[2]


IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(what):
    """Skips the test, or fails it under CI=true where everything must be present."""
    if IN_CI:
        pytest.fail(f"{what} (CI=true: missing prerequisites are failures)", pytrace=False)
    pytest.skip(what)


def ferry_binary():
    """Path of the ferry binary, or None if it does not exist."""
    path = Path(os.environ.get("FERRY_BIN", REPO / "build" / "ferry"))
    if not path.is_absolute():
        path = REPO / path
    return path if path.is_file() and os.access(path, os.X_OK) else None


def cache_dir(kind):
    """Where generated models of `kind` ("small", "full", "onnx") are cached."""
    root = Path(os.environ.get("FERRY_MODELS_DIR", GEN.parent / "generated"))
    return root / kind


def ensure_model(source, name, size):
    """Generates (or reuses the cached) model; returns its sidecar dict plus "path".

    source: "torch" (export_models.py, needs torch) or "onnx" (make_onnx_models.py)."""
    from common import generator_hash, read_sidecar

    if source == "torch":
        try:
            import torch  # noqa: F401
            import torchvision  # noqa: F401
        except ImportError as e:
            unavailable(f"torch/torchvision not importable: {e}")
        import export_models as gen

        out = cache_dir(size)
    else:
        import make_onnx_models as gen

        out = cache_dir("onnx")
    meta = read_sidecar(out, name)
    fresh = meta is not None and meta.get("generator") == generator_hash(*gen.SOURCES) \
        and (out / meta["file"]).exists()
    if not fresh:
        if source == "torch":
            gen.export(name, size, out)
        else:
            gen.build(name, out)
        meta = read_sidecar(out, name)
    meta["path"] = out / meta["file"]
    return meta
