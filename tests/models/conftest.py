"""pytest setup for the end-to-end model tests: makes tests/models/gen importable.

The helpers live in gen/model_cache.py, so test modules import them by a unique
name (every conftest.py is a module named "conftest"); they are re-exported here
for code that loads this file directly (tests/validate does).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gen"))

from model_cache import IN_CI, REPO, cache_dir, ensure_model, ferry_binary, unavailable  # noqa: E402,F401
