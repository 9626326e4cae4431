"""pytest setup for the repair tests (docs/repair.md): the model generators are
importable (`ferry_api` and `ort` are in tests/conftest.py)."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
for sub in ("models", "models/gen"):
    if str(TESTS / sub) not in sys.path:
        sys.path.insert(0, str(TESTS / sub))
