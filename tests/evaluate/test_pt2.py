"""torch.export programs (.pt2) in `ferry evaluate`'s migration track: a .pt2
baseline runs in PyTorch (torch.export.load(...).module()), a .pt2 submission
runs in ferry (its PyTorch frontend); the same program scores full accuracy, a
changed one scores 0 with its MAE. A .pt2 [model] beside a Python-module
baseline is the PyTorch peer (and the ferry peer)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from eval_util import FILLED_README, require

HERE = Path(__file__).resolve().parent

TASK = """\
format = 1
name = "tiny_pt2"
track = "migration"
[baseline]
path = "model.pt2"
[[inputs]]
name = "x"
shape = [4, 16]
[trials]
count = 2
[timing]
warmup = 1
iters = 3
rounds = 2
threads = 1
"""


@pytest.fixture(scope="module")
def pt2_task(tmp_path_factory):
    """The task (model.pt2 as the baseline) and changed.pt2 beside it."""
    require("torch")
    d = tmp_path_factory.mktemp("pt2_task")
    r = subprocess.run([sys.executable, str(HERE / "make_tiny_pt2.py"), str(d / "model.pt2"), "--changed",
                        str(d / "changed.pt2")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (d / "task.toml").write_text(TASK)
    shutil.copy(HERE / "make_tiny_pt2.py", d / "tiny.py")   # its Tiny class, as a baseline module
    return d


def model_submission(root, model):
    root.mkdir(parents=True)
    shutil.copy(model, root / "model.pt2")
    (root / "submission.toml").write_text('format = 1\nkind = "model"\n[model]\npath = "model.pt2"\n')
    (root / "README.md").write_text(FILLED_README)
    return root


@pytest.mark.parametrize("model,aligned", [("model.pt2", True), ("changed.pt2", False)])
def test_pt2_baseline_in_pytorch_and_pt2_submission_in_ferry(pt2_task, evaluate, tmp_path, model, aligned):
    p, r = evaluate(pt2_task, model_submission(tmp_path / "sub", pt2_task / model))
    assert p.returncode == 0, p.stderr
    cands = r["timing"]["candidates"]
    assert cands["baseline"]["runtime"].startswith("torch ")            # torch.export.load(...).module()
    assert cands["submission"]["runtime"].startswith("ferry ")          # ferry's PyTorch frontend
    assert r["status"] == "ok" and r["task"]["track"] == "migration"
    if aligned:
        assert r["accuracy"]["mae"] < 1e-5 and r["score"]["accuracy"]["points"] == 20
        assert r["score"]["performance"]["points"] > 0
    else:
        assert r["accuracy"]["mae"] > 1e-2 and r["score"]["accuracy"]["points"] == 0
        assert r["score"]["performance"]["points"] == 0


def test_pt2_model_is_the_pytorch_peer(pt2_task, evaluate, tmp_path):
    task = tmp_path / "module_task"
    task.mkdir()
    for f in ("tiny.py", "model.pt2"):
        shutil.copy(pt2_task / f, task / f)
    # The module baseline: torch.manual_seed(0), then Tiny(), as make_tiny_pt2.py builds model.pt2.
    text = TASK.replace('path = "model.pt2"', 'path = "tiny.py"\nclass = "Tiny"\nseed = 0\n[model]\npath = "model.pt2"')
    (task / "task.toml").write_text(text)
    p, r = evaluate(task, model_submission(tmp_path / "sub", pt2_task / "changed.pt2"), "--peers", "pytorch,ferry")
    assert p.returncode == 0, p.stderr
    cands = r["timing"]["candidates"]
    assert cands["baseline"]["runtime"].startswith("torch ")
    assert cands["peer:pytorch"]["runtime"].startswith("torch ")   # the .pt2 in torch.export
    assert cands["peer:ferry"]["runtime"].startswith("ferry ")     # the .pt2 in ferry
    for peer in ("peer:pytorch", "peer:ferry"):
        assert cands[peer]["latency"]["samples"] == 6
        assert cands[peer]["accuracy_trial0"][0]["mae"] < 1e-5, peer   # the same weights as the module
    assert r["accuracy"]["mae"] > 1e-2 and r["score"]["accuracy"]["points"] == 0   # the changed submission
