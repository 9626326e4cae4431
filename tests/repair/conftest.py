"""pytest setup for the repair tests (docs/repair.md): the model generators are
importable, and the fixtures hand out the ferry package and ONNX Runtime (a
failure under CI=true when one is missing, else a skip)."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for sub in ("models", "models/gen"):
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
def ort():
    try:
        import onnxruntime
    except ImportError as e:
        unavailable(f"onnxruntime not importable: {e}")
    return onnxruntime
