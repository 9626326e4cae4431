"""pytest setup for the Python package tests: the model generators and the
malformed-model corpus are importable (`ferry_api` and `onnx_mod` are in tests/conftest.py)."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
for sub in ("models", "models/gen", "bad_inputs"):
    if str(TESTS / sub) not in sys.path:
        sys.path.insert(0, str(TESTS / sub))
