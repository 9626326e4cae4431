"""pytest setup for the Python package tests: the model generators and the
malformed-model corpus are importable, and `onnx_mod` is onnx (a failure under
CI=true when it is missing, else a skip; `ferry_api` is in tests/conftest.py)."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for sub in ("models", "models/gen", "bad_inputs"):
    if str(TESTS / sub) not in sys.path:
        sys.path.insert(0, str(TESTS / sub))

from model_cache import unavailable  # noqa: E402


@pytest.fixture(scope="session")
def onnx_mod():
    try:
        import onnx
    except ImportError as e:
        unavailable(f"onnx not importable: {e}")
    return onnx
