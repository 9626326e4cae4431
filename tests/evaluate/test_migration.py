"""The migration track end to end: the shipped Keras task (a SavedModel made by
its generator with tensorflow-cpu) and its example submission, ferry running
the SavedModel, compared with TensorFlow under the MAE < 0.01 rule."""

from __future__ import annotations

import shutil

from eval_util import REPO, require


def test_keras_migration_task(ferry_bin, evaluate, tmp_path):
    require("tensorflow")
    task = tmp_path / "keras_migration"
    shutil.copytree(REPO / "tasks" / "keras_migration", task,
                    ignore=shutil.ignore_patterns("saved_model", "__pycache__"))
    # Fewer trials and rounds than the task's, a smaller input: the rule is the task's own.
    text = (task / "task.toml").read_text().replace("shape = [4, 32, 32, 3]", "shape = [1, 16, 16, 3]")
    (task / "task.toml").write_text(text)
    p, r = evaluate(task, task / "example_submission", "--trials", "2", "--rounds", "2", "--iters", "3",
                    "--threads", "1", "--peers", "ferry")
    assert p.returncode == 0, p.stderr
    assert (task / "saved_model" / "saved_model.pb").is_file()     # generated on first use
    assert r["task"]["track"] == "migration"
    assert r["timing"]["candidates"]["baseline"]["runtime"].startswith("tensorflow ")
    assert r["accuracy"]["mae"] < 1e-4 and r["score"]["accuracy"]["points"] == 20
    assert r["score"]["performance"]["points"] > 0
    # The submission is ferry on the SavedModel itself, so the ferry peer would repeat it.
    assert not any(k.startswith("peer:") for k in r["timing"]["candidates"])
    checks = {c["name"]: c for c in r["score"]["quality"]["checks"]}
    assert checks["tests"]["status"] == "pass", checks["tests"]
    assert checks["readme"]["points"] == 5 and checks["lint"]["status"] in ("pass", "n/a")
