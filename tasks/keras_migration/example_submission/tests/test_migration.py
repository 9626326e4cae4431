"""The example submission's own test: ferry imports the whole model (no
unsupported op) and its optimized graph keeps the model's interface."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parent.parent.parent / "saved_model"


def ferry_bin():
    exe = os.environ.get("FERRY_BIN") or shutil.which("ferry")
    if not exe:
        pytest.skip("no ferry executable (set FERRY_BIN)")
    return exe


def test_every_op_is_supported():
    r = subprocess.run([ferry_bin(), "inspect", str(MODEL), "--json", "--optimized"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["coverage"]["unsupported"] == []
    assert [i["name"] for i in report["inputs"]] == ["image"]
