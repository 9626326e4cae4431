"""`ferry evaluate --init DIR --task TASK_DIR [--kind K]`: a submission template.

Writes into DIR (which must not exist or be empty):

    submission.toml      kind (default: plugin for operator tasks, model for migration)
    README.md            the technical report skeleton (scored by the readme check)
    plugin/              CMakeLists.txt, kernel.cc (ferry_kernel_v1 for the task's op), kernel_test.cc
    python/              model.py (a copy of the baseline module when the baseline is one) + test_model.py

The generic files live in templates/ next to this file; a task may ship its
own in TASK_DIR/template/ (same layout), which replace them, e.g. a plugin
skeleton that already computes the op naively. @NAME@ placeholders are filled in.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from .task import EvaluateError, load_task

GENERIC = Path(__file__).resolve().parent / "templates"

BASELINE_TEST = '''"""The Python submission's own test: Model against the task's baseline.

`ferry evaluate` runs it with FERRY_TASK_DIR set to the task directory; by
hand it falls back to the task this template was made for.
"""

import importlib.util
import os
from pathlib import Path

import numpy as np
import torch

TASK_DIR = Path(os.environ.get("FERRY_TASK_DIR", @TASK_DIR_REPR@))
INIT = @INIT_REPR@
SEED = @SEED@
SHAPES = @SHAPES_REPR@


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(path, name):
    torch.manual_seed(SEED)
    return load(path, name).Model(**INIT).eval()


def test_matches_the_baseline():
    baseline = build(TASK_DIR / @BASELINE_NAME_REPR@, "baseline")
    model = build(Path(__file__).with_name("model.py"), "submission")
    rng = np.random.default_rng(0)
    xs = [torch.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in SHAPES]
    with torch.inference_mode():
        want, got = baseline(*xs), model(*xs)
    assert got.shape == want.shape
    assert torch.allclose(got, want, atol=1e-4, rtol=1e-4)
'''


def _fill(text, values):
    return re.sub(r"@([A-Z_]+)@", lambda m: str(values.get(m.group(1), m.group(0))), text)


def write_template(out_dir, task_dir, kind=None):
    task = load_task(task_dir)
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise EvaluateError("exists and is not an empty directory; --init writes a fresh template", out)
    kind = kind or ("plugin" if task.track == "operator" else "model")
    op = task.model.op if task.model is not None and task.model.op else "Attention"
    kernel = re.sub(r"[^a-z0-9_]", "_", f"{task.name}_{op}".lower())
    values = {
        "TASK": task.name,
        "TITLE": task.title,
        "TRACK": task.track,
        "KIND": kind,
        "OP": op,
        "KERNEL": kernel,
        "MIN_WORDS": task.score.readme_min_words,
        "MODEL_TABLE": ('[model]           # kind = "model": the model file ferry runs (ferry convert makes one)\n'
                        'path = "model.onnx"') if kind == "model" else
                       '# [model]         # kind = "model": the model file ferry runs\n# path = "model.onnx"',
    }
    written = []
    sources = {}
    for root in (GENERIC, task.dir / "template"):
        if root.is_dir():
            for f in sorted(root.rglob("*")):
                if f.is_file() and "__pycache__" not in f.parts:
                    sources[f.relative_to(root)] = f
    out.mkdir(parents=True, exist_ok=True)
    b = task.baseline
    python_from_baseline = b.kind == "python" and (task.dir / "template" / "python" / "model.py").exists() is False
    for rel, src in sources.items():
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if python_from_baseline and rel == Path("python/model.py"):
            text = (f"# Start from the baseline ({b.path.name}): make it faster, keep its results.\n"
                    f"# `ferry evaluate` builds Model(**{b.init!r}) after torch.manual_seed({b.seed}).\n"
                    + b.path.read_text(encoding="utf-8"))
        elif python_from_baseline and rel == Path("python/test_model.py"):
            text = _fill(BASELINE_TEST, {
                "TASK_DIR_REPR": repr(str(task.dir.resolve())),
                "INIT_REPR": repr(b.init),
                "SEED": b.seed,
                "SHAPES_REPR": repr([list(i.shape) for i in task.inputs]),
                "BASELINE_NAME_REPR": repr(str(b.path.relative_to(task.dir))),
            })
        else:
            try:
                text = _fill(src.read_text(encoding="utf-8"), values)
            except UnicodeDecodeError:
                shutil.copyfile(src, dst)
                written.append(dst)
                continue
        dst.write_text(text, encoding="utf-8")
        written.append(dst)
    return kind, written
