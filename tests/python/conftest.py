"""pytest setup for the Python package tests: the model generators and the
malformed-model corpus are importable, and `ferry_api` is the package with its
compiled extension (a failure under CI=true when it is missing, else a skip)."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for sub in ("models", "models/gen", "bad_inputs"):
    if str(TESTS / sub) not in sys.path:
        sys.path.insert(0, str(TESTS / sub))

from model_cache import unavailable  # noqa: E402


@pytest.fixture(scope="session")
def ferry_api():
    """The installed `ferry` package, with ferry._ferry importable."""
    try:
        import ferry
        import ferry._ferry  # noqa: F401
    except ImportError as e:
        unavailable(f"the ferry Python package is not installed with its extension ({e}); run scripts/setup.sh")
    return ferry


@pytest.fixture(scope="session")
def onnx_mod():
    try:
        import onnx
    except ImportError as e:
        unavailable(f"onnx not importable: {e}")
    return onnx
