"""`ferry evaluate` as a user meets it: --init templates that build and pass their
own tests, the shipped example submission, Python submissions, the reviewer
file, peers and the plot, and the errors for bad task and submission files."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from eval_util import FLASH, prebuilt_submission, require


def ferry(ferry_bin, *args, timeout=600):
    return subprocess.run([str(ferry_bin), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def checks_of(result):
    return {c["name"]: c for c in result["score"]["quality"]["checks"]}


def test_init_writes_a_template_that_builds_and_passes_its_test(ferry_bin, tiny_task, evaluate, tmp_path):
    sub = tmp_path / "mine"
    p = ferry(ferry_bin, "evaluate", "--init", sub, "--task", tiny_task)
    assert p.returncode == 0, p.stderr
    for f in ("submission.toml", "README.md", "plugin/CMakeLists.txt", "plugin/kernel.cc", "plugin/kernel_test.cc",
              "python/model.py", "python/test_model.py"):
        assert (sub / f).is_file(), f
    assert 'kind = "plugin"' in (sub / "submission.toml").read_text()
    assert "FERRY-TEMPLATE" in (sub / "README.md").read_text()
    assert '"tiny_attention_attention"' in (sub / "plugin/kernel.cc").read_text()  # the task's template, filled in

    p, r = evaluate(tiny_task, sub)
    assert p.returncode == 0, p.stderr
    c = checks_of(r)
    assert c["tests"]["status"] == "pass", c["tests"]          # built by cmake, kernel_test passed under ctest
    assert c["lint"]["status"] == "pass", c["lint"]            # no warning under -Wall -Wextra
    assert c["readme"]["points"] == 0 and "still holds the template's placeholder" in c["readme"]["detail"]
    assert r["score"]["accuracy"]["points"] == 20              # the template's naive kernel is correct
    assert r["submission"]["library"].endswith("libtiny_attention_attention.so")

    again = ferry(ferry_bin, "evaluate", "--init", sub, "--task", tiny_task)
    assert again.returncode == 2 and "is not an empty directory" in again.stderr


def test_example_submission_scores_every_automated_check(tiny_task, evaluate, tmp_path):
    sub = tmp_path / "example"
    shutil.copytree(FLASH / "example_submission", sub)
    p, r = evaluate(tiny_task, sub, "--review", write_review(tmp_path, 4, "clear report"))
    assert p.returncode == 0, p.stderr
    c = checks_of(r)
    assert (c["tests"]["points"], c["readme"]["points"], c["lint"]["points"], c["reviewer"]["points"]) == (6, 5, 3, 4)
    assert "clear report" in c["reviewer"]["detail"]
    assert r["score"]["quality"]["points"] == 18
    assert r["score"]["accuracy"]["points"] == 20 and r["accuracy"]["correct"]
    # ferry's own attention kernel, compiled from this checkout's src/ (FERRY_SOURCE_DIR) for this host's ISA.
    assert r["submission"]["plugin"]["name"] in ("ferry_attention_f32__avx2", "ferry_attention_f32__avx512")
    assert r["submission"]["plugin"]["nodes"] == 1


def write_review(tmp_path, score, notes=""):
    f = tmp_path / f"review_{score}.toml"
    f.write_text(f'score = {score}\nreviewer = "test"\nnotes = "{notes}"\n')
    return f


def test_reviewer_score_above_the_tasks_points_is_an_error(tiny_task, plugin, evaluate, tmp_path):
    review = write_review(tmp_path, 9)
    p, _ = evaluate(tiny_task, prebuilt_submission(tmp_path / "s", plugin("ok")), "--review", review)
    assert p.returncode == 2 and f"{review}: score = 9 is more than the task's reviewer points (6)" in p.stderr


def test_peers_and_plot(ferry_bin, tiny_task, plugin, tmp_path):
    require("matplotlib")
    sub = prebuilt_submission(tmp_path / "s", plugin("ok"))
    for plot in ("plot.png", "plot.svg"):
        out = tmp_path / plot
        p = ferry(ferry_bin, "evaluate", tiny_task, "--submission", sub, "--peers", "onnxruntime,openvino,ferry",
                  "--plot", out, "--json", tmp_path / "r.json")
        assert p.returncode == 0, p.stderr
        r = json.loads((tmp_path / "r.json").read_text())
        peers = {k: v for k, v in r["timing"]["candidates"].items() if k.startswith("peer:")}
        # The baseline is ONNX Runtime itself, so the onnxruntime peer is not repeated.
        assert "peer:onnxruntime" not in peers and "peer:ferry" in peers
        assert peers["peer:ferry"]["latency"]["samples"] == 6
        assert peers["peer:ferry"]["accuracy_trial0"][0]["mae"] < 1e-5
        if "peer:openvino" in peers and peers["peer:openvino"]["latency"]:
            assert peers["peer:openvino"]["accuracy_trial0"][0]["mae"] < 1e-5
        head = out.read_bytes()[:200]
        assert head.startswith(b"\x89PNG") if plot.endswith(".png") else b"<svg" in out.read_bytes()[:2000]
        assert "latency (2 alternating rounds x 3 iterations" in p.stdout and "total" in p.stdout


TINY_PYTHON_TASK = """\
format = 1
name = "tiny_python"
track = "operator"
[baseline]
path = "baseline.py"
init = { d_model = 16 }
seed = 3
[[inputs]]
name = "x"
shape = [2, 32, 16]
[trials]
count = 2
[timing]
warmup = 1
iters = 3
rounds = 2
threads = 1
"""


def test_python_submission_from_the_template(ferry_bin, evaluate, tmp_path):
    require("torch")
    task = tmp_path / "task"
    task.mkdir()
    shutil.copy(FLASH / "baseline.py", task / "baseline.py")
    (task / "task.toml").write_text(TINY_PYTHON_TASK)
    sub = tmp_path / "sub"
    p = ferry(ferry_bin, "evaluate", "--init", sub, "--task", task, "--kind", "python")
    assert p.returncode == 0, p.stderr
    assert 'kind = "python"' in (sub / "submission.toml").read_text()
    assert "class Model(nn.Module)" in (sub / "python/model.py").read_text()   # starts from the baseline
    p, r = evaluate(task, sub)
    assert p.returncode == 0, p.stderr
    assert r["accuracy"]["mae"] == 0.0 and r["score"]["accuracy"]["points"] == 20   # same seed, same weights
    c = checks_of(r)
    assert c["tests"]["status"] == "pass", c["tests"]
    assert c["lint"]["status"] in ("pass", "n/a"), c["lint"]
    assert r["timing"]["candidates"]["baseline"]["runtime"].startswith("torch ")


def test_usage_and_input_errors(ferry_bin, tiny_task, plugin, tmp_path):
    p = ferry(ferry_bin, "evaluate", tiny_task)
    assert p.returncode == 1 and "--submission DIR is required" in p.stderr
    p = ferry(ferry_bin, "evaluate", "--init", tmp_path / "x")
    assert p.returncode == 1 and "--init DIR needs --task TASK_DIR" in p.stderr
    sub = prebuilt_submission(tmp_path / "s", plugin("ok"))

    bad = tmp_path / "bad_task"
    bad.mkdir()
    (bad / "task.toml").write_text("format = 1\nname = 'b'\ntrack = 'operator'\n[baseline]\npath = 'gone.onnx'\n"
                                   "[[inputs]]\nname = 'x'\nshape = [1]\n")
    p = ferry(ferry_bin, "evaluate", bad, "--submission", sub)
    assert p.returncode == 2
    assert f"{bad / 'gone.onnx'}: the baseline gone.onnx does not exist and the task names no generator" in p.stderr

    (bad / "task.toml").write_text("format = 1\nname = 'b'\ntrack = 'operator'\n[baseline]\npath = 'b.onnx'\n"
                                   "[[inputs]]\nname = 'x'\nshape = [1]\ngenrator = 'normal'\n")
    p = ferry(ferry_bin, "evaluate", bad, "--submission", sub)
    assert p.returncode == 2 and f"{bad / 'task.toml'}: inputs[0]: unknown key 'genrator'" in p.stderr

    p = ferry(ferry_bin, "evaluate", tmp_path / "nowhere", "--submission", sub)
    assert p.returncode == 2 and "not a task directory" in p.stderr

    empty = tmp_path / "empty_sub"
    empty.mkdir()
    p = ferry(ferry_bin, "evaluate", tiny_task, "--submission", empty)
    assert p.returncode == 2 and "no submission.toml, and the kind cannot be guessed" in p.stderr

    (empty / "submission.toml").write_text('format = 1\nkind = "plugin"\n')
    p = ferry(ferry_bin, "evaluate", tiny_task, "--submission", empty)
    assert p.returncode == 2 and "plugin/CMakeLists.txt does not exist" in p.stderr

    p = ferry(ferry_bin, "evaluate", tiny_task, "--submission", sub, "--plot", tmp_path / "p.pdf")
    assert p.returncode == 2 and "must end in .png or .svg" in p.stderr


def test_plugin_that_does_not_build(tiny_task, evaluate, tmp_path):
    sub = tmp_path / "broken"
    (sub / "plugin").mkdir(parents=True)
    (sub / "plugin" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(b CXX)\nadd_library(b MODULE k.cc)\n")
    (sub / "plugin" / "k.cc").write_text("this is not C++\n")
    p, r = evaluate(tiny_task, sub)
    assert p.returncode == 2 and "the plugin does not build" in p.stderr and "k.cc" in p.stderr
    assert r["status"] == "invalid"


def test_help_lists_evaluate_and_env_not_worker(ferry_bin):
    p = ferry(ferry_bin, "--help")
    assert p.returncode == 0
    assert "evaluate" in p.stdout and "env" in p.stdout and "worker" not in p.stdout
    p = ferry(ferry_bin, "evaluate", "--help")
    assert "--submission" in p.stdout and "--init" in p.stdout and "60 * min(1, baseline p50 / p50)" in p.stdout
    p = ferry(ferry_bin, "bogus")
    assert "worker" not in p.stderr and "evaluate" in p.stderr


@pytest.mark.full
def test_the_real_flash_attention_task(ferry_bin, tmp_path):
    """The shipped task at its size (b8 s1024 d64, 5 trials) with the reference submission (ferry's own
    attention kernel as a plugin) and all peers: `pytest -m full tests/evaluate`."""
    require("torch")
    task = tmp_path / "flash_attention"
    shutil.copytree(FLASH, task, ignore=shutil.ignore_patterns("baseline.onnx", "__pycache__"))
    out = tmp_path / "r.json"
    p = ferry(ferry_bin, "evaluate", task, "--submission", task / "example_submission", "--json", out,
              "--plot", tmp_path / "plot.png", timeout=3600)
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    assert len(r["accuracy"]["trials"]) == 5 and r["accuracy"]["mae"] < 1e-5
    assert r["score"]["accuracy"]["points"] == 20
    # ferry's own kernel in the baseline graph beats the PyTorch module: full performance points.
    assert r["timing"]["speedup"] > 1 and r["score"]["performance"]["points"] == 60, r["timing"]["speedup"]
    c = checks_of(r)
    assert (c["tests"]["status"], c["lint"]["status"], c["readme"]["points"]) == ("pass", "pass", 5), c
