"""Task directories: task.toml, format 1 (docs/evaluate.md, "Task directory").

    task = load_task("tasks/flash_attention")      # raises EvaluateError naming the file and key

Every table and key is checked: an unknown key is an error (a typo must not
silently fall back to a default), and so is a value of the wrong type.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

TASK_FORMAT = 1
TASK_FILE = "task.toml"

BASELINE_KINDS = ("python", "onnx", "tensorflow", "pt2")
GENERATORS = ("normal", "uniform", "randint", "zeros", "ones")
DTYPES = ("float32", "float16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")
PEERS = ("onnxruntime", "pytorch", "openvino", "ferry")
STATISTICS = ("p50", "p90", "mean", "min")
ACCURACY_METRICS = ("mae", "max_ae")


class EvaluateError(Exception):
    """A task, submission or command line that cannot be evaluated. `path` names the file."""

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = str(path) if path is not None else None

    def __str__(self):
        msg = super().__str__()
        return f"{self.path}: {msg}" if self.path else msg


def read_toml(path):
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        raise EvaluateError(f"reading TOML needs Python 3.11+ (tomllib); this is {sys.version.split()[0]}",
                            path) from None
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise EvaluateError("no such file", path) from None
    except OSError as e:
        raise EvaluateError(f"cannot read: {e.strerror}", path) from None
    except tomllib.TOMLDecodeError as e:
        raise EvaluateError(f"not valid TOML: {e}", path) from None


class Table:
    """Typed access to one TOML table; every key read is remembered, the rest are unknown."""

    def __init__(self, data, where, path):
        if not isinstance(data, dict):
            raise EvaluateError(f"{where} must be a table", path)
        self.data, self.where, self.path, self.seen = data, where, path, set()

    def _get(self, key, types, default, required):
        self.seen.add(key)
        if key not in self.data:
            if required:
                raise EvaluateError(f"{self.where}: missing key '{key}'", self.path)
            return default
        v = self.data[key]
        if types is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not isinstance(v, types) or (isinstance(v, bool) and types in (int, float)):
            want = types.__name__ if isinstance(types, type) else " or ".join(t.__name__ for t in types)
            raise EvaluateError(f"{self.where}.{key} must be {want}, got {v!r}", self.path)
        return v

    def str(self, key, default=None, required=False, choices=None):
        v = self._get(key, str, default, required)
        if choices and v is not None and v not in choices:
            raise EvaluateError(f"{self.where}.{key} = {v!r} is not one of: {', '.join(choices)}", self.path)
        return v

    def int(self, key, default=None, required=False, low=None, high=None):
        v = self._get(key, int, default, required)
        if v is not None and ((low is not None and v < low) or (high is not None and v > high)):
            raise EvaluateError(f"{self.where}.{key} = {v} is out of range [{low}, {high}]", self.path)
        return v

    def float(self, key, default=None, required=False, low=None):
        v = self._get(key, float, default, required)
        if v is not None and (not math.isfinite(v) or (low is not None and v < low)):
            raise EvaluateError(f"{self.where}.{key} = {v} must be a finite number >= {low}", self.path)
        return v

    def bool(self, key, default=None):
        return self._get(key, bool, default, False)

    def list(self, key, default=None, required=False):
        return self._get(key, list, default, required)

    def table(self, key, required=False):
        self.seen.add(key)
        if key not in self.data:
            if required:
                raise EvaluateError(f"missing table [{self._sub(key)}]", self.path)
            return Table({}, self._sub(key), self.path)
        return Table(self.data[key], self._sub(key), self.path)

    def raw(self, key, default=None):
        self.seen.add(key)
        return self.data.get(key, default)

    def _sub(self, key):
        return key if self.where == "task" or self.where == "submission" else f"{self.where}.{key}"

    def done(self):
        unknown = sorted(set(self.data) - self.seen)
        if unknown:
            raise EvaluateError(
                f"{self.where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(sorted(self.seen))})",
                self.path,
            )


@dataclass
class InputSpec:
    name: str
    shape: list
    dtype: str
    generator: str = "normal"
    mean: float = 0.0
    std: float = 1.0
    low: float = 0.0
    high: float = 1.0


@dataclass
class Band:
    below: float
    points: float


@dataclass
class ScoreRule:
    perf_points: float = 60.0
    perf_statistic: str = "p50"
    perf_cap: float = 1.0
    perf_requires_accuracy: bool = True
    acc_metric: str = "mae"
    acc_bands: list = field(default_factory=lambda: [Band(1e-3, 20.0), Band(1e-2, 15.0)])
    q_tests: float = 6.0
    q_readme: float = 5.0
    q_lint: float = 3.0
    q_reviewer: float = 6.0
    readme_min_words: int = 15

    @property
    def acc_points(self):
        return max((b.points for b in self.acc_bands), default=0.0)

    @property
    def quality_points(self):
        return self.q_tests + self.q_readme + self.q_lint + self.q_reviewer

    @property
    def total_points(self):
        return self.perf_points + self.acc_points + self.quality_points


@dataclass
class ModelRef:
    """A model file of the task: the baseline's, or the graph plugins run inside."""

    kind: str  # python | onnx | tensorflow | pt2
    path: Path
    generate: Path | None = None
    class_name: str = "Model"
    init: dict = field(default_factory=dict)
    seed: int = 0
    signature: str = ""
    op: str = ""  # [model] only: the op a kernel plugin replaces


@dataclass
class Task:
    dir: Path
    file: Path
    name: str
    title: str
    track: str
    description: str
    baseline: ModelRef
    model: ModelRef | None
    inputs: list
    trials: int = 5
    trial_seed: int = 0
    warmup: int = 3
    iters: int = 10
    rounds: int = 5
    timeout_s: float = 120.0
    threads: int = 0
    atol: float = 1e-4
    rtol: float = 1e-4
    peers: list = field(default_factory=lambda: list(PEERS))
    score: ScoreRule = field(default_factory=ScoreRule)

    def batch(self):
        """Items per run for throughput: the first dim of the first input (1 for a scalar)."""
        shape = self.inputs[0].shape if self.inputs else []
        return shape[0] if shape else 1


def _model_kind(path):
    p = str(path)
    if p.endswith(".py"):
        return "python"
    if p.endswith(".onnx"):
        return "onnx"
    if p.endswith(".pt2"):
        return "pt2"
    return "tensorflow"  # a SavedModel directory or a frozen .pb


def _parse_model(t, task_dir, table_name):
    kind = t.str("kind", choices=BASELINE_KINDS)
    path = t.str("path", required=True)
    gen = t.str("generate")
    ref = ModelRef(kind=kind or _model_kind(path), path=(task_dir / path), generate=(task_dir / gen) if gen else None)
    if table_name == "baseline":
        ref.class_name = t.str("class", "Model")
        init = t.raw("init", {})
        if not isinstance(init, dict):
            raise EvaluateError("baseline.init must be a table of keyword arguments", t.path)
        ref.init = init
        ref.seed = t.int("seed", 0, low=0)
        ref.signature = t.str("signature", "")
    else:
        ref.op = t.str("op", "")
        ref.signature = t.str("signature", "")
    t.done()
    return ref


def _parse_inputs(root, path):
    items = root.list("inputs", required=True)
    if not items:
        raise EvaluateError("[[inputs]] must list at least one input", path)
    out, names = [], set()
    for i, item in enumerate(items):
        t = Table(item, f"inputs[{i}]", path)
        spec = InputSpec(name=t.str("name", required=True), shape=t.list("shape", required=True),
                         dtype=t.str("dtype", "float32", choices=DTYPES))
        if spec.name in names:
            raise EvaluateError(f"inputs[{i}]: input '{spec.name}' is listed twice", path)
        names.add(spec.name)
        if not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= 1 << 31 for d in spec.shape):
            raise EvaluateError(f"inputs[{i}].shape must be a list of non-negative integers, got {spec.shape!r}", path)
        spec.generator = t.str("generator", "normal", choices=GENERATORS)
        spec.mean = t.float("mean", 0.0)
        spec.std = t.float("std", 1.0, low=0.0)
        spec.low = t.float("low", 0.0)
        spec.high = t.float("high", 1.0)
        if spec.generator in ("uniform", "randint") and not spec.high > spec.low:
            raise EvaluateError(f"inputs[{i}]: high ({spec.high}) must be greater than low ({spec.low})", path)
        if spec.generator == "randint" and spec.dtype.startswith("float"):
            raise EvaluateError(f"inputs[{i}]: generator 'randint' needs an integer dtype, not {spec.dtype}", path)
        t.done()
        out.append(spec)
    return out


def _parse_score(t, path):
    rule = ScoreRule()
    perf = t.table("performance")
    rule.perf_points = perf.float("points", rule.perf_points, low=0.0)
    rule.perf_statistic = perf.str("statistic", rule.perf_statistic, choices=STATISTICS)
    rule.perf_cap = perf.float("cap", rule.perf_cap, low=0.0)
    if rule.perf_cap <= 0:
        raise EvaluateError("score.performance.cap must be > 0", path)
    rule.perf_requires_accuracy = perf.bool("requires_accuracy", rule.perf_requires_accuracy)
    perf.done()
    acc = t.table("accuracy")
    rule.acc_metric = acc.str("metric", rule.acc_metric, choices=ACCURACY_METRICS)
    bands = acc.list("bands")
    if bands is not None:
        rule.acc_bands = []
        for i, b in enumerate(bands):
            bt = Table(b, f"score.accuracy.bands[{i}]", path)
            rule.acc_bands.append(Band(below=bt.float("below", required=True, low=0.0),
                                       points=bt.float("points", required=True, low=0.0)))
            bt.done()
        rule.acc_bands.sort(key=lambda b: b.below)
    acc.done()
    q = t.table("quality")
    rule.q_tests = q.float("tests", rule.q_tests, low=0.0)
    rule.q_readme = q.float("readme", rule.q_readme, low=0.0)
    rule.q_lint = q.float("lint", rule.q_lint, low=0.0)
    rule.q_reviewer = q.float("reviewer", rule.q_reviewer, low=0.0)
    rule.readme_min_words = q.int("readme_min_words", rule.readme_min_words, low=0)
    q.done()
    t.done()
    return rule


def load_task(task_dir):
    task_dir = Path(task_dir)
    if not task_dir.is_dir():
        raise EvaluateError("not a task directory (no such directory)", task_dir)
    file = task_dir / TASK_FILE
    if not file.is_file():
        raise EvaluateError(f"no {TASK_FILE} in the task directory", task_dir)
    root = Table(read_toml(file), "task", file)
    fmt = root.int("format", required=True)
    if fmt != TASK_FORMAT:
        raise EvaluateError(f"format = {fmt}: this ferry reads task format {TASK_FORMAT}", file)
    name = root.str("name", required=True)
    track = root.str("track", required=True, choices=("operator", "migration"))
    title = root.str("title", name)
    description = root.str("description", "")
    baseline = _parse_model(root.table("baseline", required=True), task_dir, "baseline")
    model = None
    if "model" in root.data:
        model = _parse_model(root.table("model"), task_dir, "model")
        if model.kind == "python":
            raise EvaluateError("[model] must be a model file ferry can load (.onnx, SavedModel, .pt2)", file)
    elif baseline.kind != "python":
        model = ModelRef(kind=baseline.kind, path=baseline.path, generate=baseline.generate,
                         signature=baseline.signature)
    inputs = _parse_inputs(root, file)
    task = Task(dir=task_dir, file=file, name=name, title=title, track=track, description=description,
                baseline=baseline, model=model, inputs=inputs)
    tr = root.table("trials")
    task.trials = tr.int("count", task.trials, low=1, high=1000)
    task.trial_seed = tr.int("seed", task.trial_seed, low=0)
    tr.done()
    tm = root.table("timing")
    task.warmup = tm.int("warmup", task.warmup, low=0, high=100000)
    task.iters = tm.int("iters", task.iters, low=1, high=100000)
    task.rounds = tm.int("rounds", task.rounds, low=1, high=1000)
    task.timeout_s = tm.float("timeout_s", task.timeout_s, low=0.001)
    task.threads = tm.int("threads", task.threads, low=0, high=4096)
    tm.done()
    tol = root.table("tolerance")
    task.atol = tol.float("atol", task.atol, low=0.0)
    task.rtol = tol.float("rtol", task.rtol, low=0.0)
    tol.done()
    peers = root.table("peers")
    names = peers.list("names", list(PEERS))
    for p in names:
        if p not in PEERS:
            raise EvaluateError(f"peers.names: {p!r} is not one of: {', '.join(PEERS)}", file)
    task.peers = names
    peers.done()
    task.score = _parse_score(root.table("score"), file)
    root.done()
    return task
