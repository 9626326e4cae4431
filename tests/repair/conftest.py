"""pytest setup for the repair tests (docs/repair.md): the model generators are
importable, and `ort` hands out ONNX Runtime (a failure under CI=true when it is
missing, else a skip; `ferry_api` is in tests/conftest.py)."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for sub in ("models", "models/gen"):
    if str(TESTS / sub) not in sys.path:
        sys.path.insert(0, str(TESTS / sub))

from model_cache import unavailable  # noqa: E402


@pytest.fixture(scope="session")
def ort():
    try:
        import onnxruntime
    except ImportError as e:
        unavailable(f"onnxruntime not importable: {e}")
    return onnxruntime
