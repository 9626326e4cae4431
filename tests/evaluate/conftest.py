"""Fixtures for the `ferry evaluate` / `ferry env` tests.

tiny_task: the FlashAttention task at a tiny size (x [2, 32, 16], d_model 16),
its baseline the ONNX file (ONNX Runtime starts in a second, PyTorch in
several), generated from tasks/flash_attention/baseline.py by the task's own
make_baseline_onnx.py; its template/ is the shipped task's.

plugin(mode): tests/evaluate/plugins/test_attention.cc built with -DMODE=mode.
evaluate(task, sub, ...): `ferry evaluate` with small trial and timing counts, no peers
unless the extra arguments name some (--peers).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_util import FLASH, REPO, require  # noqa: E402

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(what):
    if IN_CI:
        pytest.fail(f"{what} (CI=true: missing prerequisites are failures)", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="session")
def ferry_bin():
    path = Path(os.environ.get("FERRY_BIN", REPO / "build" / "ferry"))
    if not path.is_absolute():
        path = REPO / path
    if not (path.is_file() and os.access(path, os.X_OK)):
        unavailable(f"ferry binary not found at {path} (build it, or set FERRY_BIN)")
    return path.resolve()


TINY_TASK = """\
format = 1
name = "tiny_attention"
title = "tiny attention (tests)"
track = "operator"

[baseline]
kind = "onnx"
path = "baseline.onnx"

[model]
path = "baseline.onnx"
op = "Attention"

[[inputs]]
name = "x"
shape = [2, 32, 16]
dtype = "float32"

[trials]
count = 2
seed = 7

[timing]
warmup = 1
iters = 3
rounds = 2
timeout_s = 30
threads = 1
"""

GEN_TASK = """\
format = 1
name = "gen"
track = "operator"
[baseline]
path = "baseline.py"
init = { d_model = 16 }
seed = 0
[model]
path = "baseline.onnx"
[[inputs]]
name = "x"
shape = [2, 32, 16]
"""


@pytest.fixture(scope="session")
def tiny_task(tmp_path_factory):
    require("torch")
    require("onnx")
    d = tmp_path_factory.mktemp("tiny_task")
    shutil.copy(FLASH / "baseline.py", d / "baseline.py")
    (d / "gen.toml").write_text(GEN_TASK)
    r = subprocess.run([sys.executable, str(FLASH / "make_baseline_onnx.py"), "--task", str(d / "gen.toml"),
                        "--out", str(d / "baseline.onnx")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (d / "gen.toml").unlink()
    (d / "task.toml").write_text(TINY_TASK)
    shutil.copytree(FLASH / "template", d / "template")
    return d


@pytest.fixture(scope="session")
def plugin(tmp_path_factory):
    cxx = shutil.which(os.environ.get("CXX", "c++"))
    if not cxx:
        unavailable("no C++ compiler (c++) to build the test plugins")
    out = tmp_path_factory.mktemp("plugins")
    built = {}

    def build(mode):
        if mode not in built:
            lib = out / f"libtest_attention_{mode}.so"
            r = subprocess.run([cxx, "-std=c++17", "-O2", "-shared", "-fPIC", f"-DMODE={mode}",
                                f"-I{REPO / 'include'}", str(REPO / "tests/evaluate/plugins/test_attention.cc"),
                                "-o", str(lib)], capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr
            built[mode] = lib
        return built[mode]

    return build


@pytest.fixture
def evaluate(ferry_bin, tmp_path):
    counter = [0]

    def run(task, sub, *extra, json_out=True, timeout=600):
        counter[0] += 1
        out = tmp_path / f"result{counter[0]}.json"
        # No peers unless the test names some (--no-peers would override its --peers).
        peers = [] if "--peers" in extra else ["--no-peers"]
        args = [str(ferry_bin), "evaluate", str(task), "--submission", str(sub), *peers, "--quiet", *extra]
        if json_out:
            args += ["--json", str(out)]
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        result = json.loads(out.read_text()) if json_out and out.exists() else None
        return p, result

    return run
