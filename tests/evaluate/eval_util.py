"""Helpers shared by the tests of tests/evaluate (fixtures are in conftest.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FLASH = REPO / "tasks" / "flash_attention"

FILLED_README = (FLASH / "example_submission" / "README.md").read_text()


def prebuilt_submission(root, lib, readme=True):
    """A plugin submission that uses `lib` as is."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "submission.toml").write_text(f'format = 1\nkind = "plugin"\n[plugin]\nprebuilt = "{lib}"\n')
    if readme:
        (root / "README.md").write_text(FILLED_README)
    return root


def require(module):
    """Skips unless `module` is installed, without importing it: TensorFlow and PyTorch's
    triton each bring an LLVM, and both in the pytest process abort it, so the
    frameworks are only ever imported inside the workers and generators."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
