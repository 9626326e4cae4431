"""`ferry evaluate`: one submission against one task (docs/evaluate.md).

    result = evaluate(Options(task="tasks/flash_attention", submission="my_submission"))

Steps: read the task and the submission; generate missing task models; build
a plugin; start the baseline and the submission as workers (workers.py);
accuracy trials on seeded inputs (inputs.py, metrics.py); peers on trial 0;
timing in alternating rounds; quality checks (quality.py); the score
(score.py). A failing submission (crash, hang, wrong shape, NaN, error
status) is a result with the reason; a task or a submission that cannot be
evaluated at all is an EvaluateError (exit 2).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import metrics, quality, score
from .inputs import make_inputs, save_inputs
from .submission import build_plugin, find_include_dir, load_submission, plugin_env
from .task import PEERS, EvaluateError, load_task
from .workers import CandidateFailure, Worker, python_worker_argv, worker_env

RESULT_FORMAT = "ferry-evaluate"
RESULT_VERSION = 1


class InvalidSubmission(EvaluateError):
    """The submission cannot be evaluated (does not build or load); the result still records it."""


@dataclass
class Options:
    task: str
    submission: str
    json: str = ""
    plot: str = ""
    review: str = ""
    work_dir: str = ""
    ferry_bin: str = ""
    trials: int | None = None
    rounds: int | None = None
    iters: int | None = None
    warmup: int | None = None
    threads: int | None = None
    timeout: float | None = None
    peers: list | None = None
    quiet: bool = False


@dataclass
class Candidate:
    key: str  # "baseline", "submission", "peer:onnxruntime", ...
    label: str
    worker: Worker | None = None
    runtime: str = ""
    failure: str = ""
    samples: list = field(default_factory=list)
    comparison: list = field(default_factory=list)  # trial-0 comparison for peers


def find_ferry_bin(given=""):
    for c in (given, os.environ.get("FERRY_BIN")):
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(Path(c).resolve())
    repo = Path(__file__).resolve().parent.parent.parent.parent
    for c in (repo / "build" / "ferry", shutil.which("ferry")):
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(Path(c).resolve())
    raise EvaluateError("cannot find the ferry executable (run through `ferry evaluate`, or set FERRY_BIN)")


def usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Harness:
    def __init__(self, o: Options):
        self.o = o
        self.log_lines = []
        self.task = load_task(o.task)
        t = self.task
        if o.trials is not None:
            t.trials = max(1, o.trials)
        if o.rounds is not None:
            t.rounds = max(1, o.rounds)
        if o.iters is not None:
            t.iters = max(1, o.iters)
        if o.warmup is not None:
            t.warmup = max(0, o.warmup)
        if o.timeout is not None:
            t.timeout_s = max(0.001, o.timeout)
        if o.peers is not None:
            for p in o.peers:
                if p not in PEERS:
                    raise EvaluateError(f"--peers: {p!r} is not one of: {', '.join(PEERS)}")
            t.peers = o.peers
        self.threads = o.threads if o.threads else (t.threads or usable_cpus())
        if o.plot:
            if Path(o.plot).suffix.lower() not in (".png", ".svg"):
                raise EvaluateError(f"--plot {o.plot}: the file must end in .png or .svg")
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                raise EvaluateError("--plot needs matplotlib: pip install -r requirements.txt") from None
        if o.review and not Path(o.review).is_file():
            raise EvaluateError("no such reviewer score file", o.review)
        self.work = Path(o.work_dir) if o.work_dir else Path(tempfile.mkdtemp(prefix="ferry-evaluate-"))
        self.work.mkdir(parents=True, exist_ok=True)
        self.keep_work = bool(o.work_dir)
        self.ferry_bin = None
        self.env = worker_env()
        # Generated task models first: a submission may name one (a migration run of the source model).
        try:
            self.ensure(t.baseline, "the baseline")
            self.sub = load_submission(o.submission)
        except BaseException:
            if not self.keep_work:
                shutil.rmtree(self.work, ignore_errors=True)
            raise

    # --- output ------------------------------------------------------------------------
    def say(self, text):
        self.log_lines.append(text)
        if not self.o.quiet:
            print(f"ferry evaluate: {text}", file=sys.stderr, flush=True)

    # --- task models -------------------------------------------------------------------
    def ensure(self, ref, what):
        if ref.path.exists():
            return
        if ref.generate is None:
            raise EvaluateError(f"{what} {ref.path.name} does not exist and the task names no generator", ref.path)
        if not ref.generate.is_file():
            raise EvaluateError(f"the generator of {ref.path.name} does not exist", ref.generate)
        self.say(f"generating {ref.path.name} with {ref.generate.name} ...")
        log = self.work / f"generate_{ref.path.name}.log"
        with open(log, "wb") as f:
            r = subprocess.run([sys.executable, str(ref.generate.resolve())], cwd=self.task.dir, stdout=f,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env, timeout=3600)
        if r.returncode != 0 or not ref.path.exists():
            from .workers import log_tail

            raise EvaluateError(f"{ref.generate.name} failed (exit {r.returncode}) to make {ref.path.name}:\n"
                                f"{log_tail(log)}", ref.generate)

    # --- workers -----------------------------------------------------------------------
    def python_worker(self, key, label, spec, start_timeout=None):
        spec = dict(spec, threads=self.threads, inputs=[i.name for i in self.task.inputs])
        spec_file = self.work / f"{key.replace(':', '_')}.spec.json"
        spec_file.write_text(json.dumps(spec, indent=1, default=str), encoding="utf-8")
        w = Worker(label, python_worker_argv(spec_file), self.work / f"{key.replace(':', '_')}.log",
                   start_timeout or max(300.0, self.task.timeout_s), env=self.env)
        return w

    def ferry_worker(self, key, label, model, plugin=None, signature=""):
        if self.ferry_bin is None:
            self.ferry_bin = find_ferry_bin(self.o.ferry_bin)
        argv = [self.ferry_bin, "worker", str(model), "--threads", str(self.threads)]
        if plugin:
            argv += ["--plugin", str(plugin)]
        if signature:
            argv += ["--signature", signature]
        return Worker(label, argv, self.work / f"{key.replace(':', '_')}.log", max(120.0, self.task.timeout_s),
                      env=self.env)

    def start_baseline(self):
        b = self.task.baseline
        label = {"python": "baseline (Python module)", "onnx": "baseline (ONNX Runtime)",
                 "tensorflow": "baseline (TensorFlow)", "pt2": "baseline (torch.export)"}[b.kind]
        spec = {"kind": {"python": "python", "onnx": "onnxruntime", "tensorflow": "tensorflow", "pt2": "pt2"}[b.kind],
                "path": str(b.path.resolve()), "class": b.class_name, "init": b.init, "seed": b.seed,
                "signature": b.signature}
        c = Candidate("baseline", label)
        try:
            c.worker = self.python_worker("baseline", label, spec)
        except CandidateFailure as e:
            raise EvaluateError(f"the baseline does not start: {e}", b.path) from None
        c.runtime = c.worker.ready.get("runtime", "")
        if b.kind == "python" and c.runtime.startswith("torch "):
            c.label = f"baseline (PyTorch, {b.path.name})"
        return c

    def start_submission(self):
        s, t = self.sub, self.task
        if s.kind == "plugin":
            if t.model is None:
                raise EvaluateError("the task has no [model]: a kernel plugin needs a model graph to run inside",
                                    t.file)
            self.ensure(t.model, "the task's model")
            if s.prebuilt is not None:
                s.library = s.prebuilt.resolve()
            else:
                self.say(f"building the plugin in {s.plugin_source} ...")
                try:
                    build_plugin(s, self.work / "plugin-build", self.work / "plugin-build.log")
                except EvaluateError as e:
                    raise InvalidSubmission(str(e)) from None
            label = f"submission (plugin {s.library.name})"
            start = lambda: self.ferry_worker("submission", label, t.model.path, plugin=s.library,  # noqa: E731
                                              signature=t.model.signature)
        elif s.kind == "python":
            label = f"submission (Python {s.module.name})"
            b = t.baseline
            spec = {"kind": "python", "path": str(s.module.resolve()), "class": s.class_name,
                    "init": s.init if s.init is not None else b.init, "seed": b.seed}
            start = lambda: self.python_worker("submission", label, spec)  # noqa: E731
        else:
            label = f"submission (ferry, {s.model.name})"
            start = lambda: self.ferry_worker("submission", label, s.model, signature=s.signature)  # noqa: E731
        c = Candidate("submission", label)
        self.say(f"starting {label} ...")
        try:
            c.worker = start()
        except CandidateFailure as e:
            raise InvalidSubmission(f"the submission does not start: {e}", s.dir) from None
        c.runtime = c.worker.ready.get("runtime", "")
        if "plugin" in c.worker.ready:
            p = c.worker.ready["plugin"]
            c.runtime += f", plugin '{p['name']}' for {p['nodes']} {p['op']} node{'s' if p['nodes'] != 1 else ''}"
            c.label = f"submission (plugin {p['name']})"
            self.plugin_info = p
        return c

    def peer_candidates(self):
        t = self.task
        onnx_model = None
        if t.model is not None and t.model.kind == "onnx":
            onnx_model = t.model
        out = []
        for name in t.peers:
            if name in ("onnxruntime", "openvino"):
                if onnx_model is None or (t.baseline.kind == "onnx" and name == "onnxruntime"):
                    continue
                out.append((name, lambda n=name: self.python_worker(
                    f"peer:{n}", n, {"kind": n, "path": str(onnx_model.path.resolve())}, start_timeout=300)))
            elif name == "pytorch":
                if t.model is not None and t.model.kind == "pt2" and t.baseline.kind != "pt2":
                    out.append((name, lambda: self.python_worker(
                        "peer:pytorch", "pytorch", {"kind": "pt2", "path": str(t.model.path.resolve())})))
            elif name == "ferry":
                if t.model is None:
                    continue
                if self.sub.kind == "model" and self.sub.model.resolve() == t.model.path.resolve():
                    continue  # the submission is that very run
                out.append((name, lambda: self.ferry_worker("peer:ferry", "ferry", t.model.path,
                                                            signature=t.model.signature)))
        return out

    # --- the run -----------------------------------------------------------------------
    def run_outputs(self, cand, inputs_file, tag):
        out_dir = self.work / "outputs" / cand.key.replace(":", "_") / tag
        reply = cand.worker.request({"cmd": "run", "inputs": str(inputs_file), "out": str(out_dir)},
                                    self.task.timeout_s, f"running {tag}")
        names = [o["name"] for o in reply["outputs"]]
        arrays = [np.load(o["file"], allow_pickle=False) for o in reply["outputs"]]
        return names, arrays

    def compare(self, ref, got):
        (rn, ra), (gn, ga) = ref, got
        if len(ga) != len(ra):
            return None, f"gave {len(ga)} output{'s' if len(ga) != 1 else ''}, the baseline {len(ra)}"
        comps = []
        for i, j in metrics.pair_outputs(rn, gn):
            comps.append(metrics.compare(rn[i], ra[i], ga[j], self.task.atol, self.task.rtol))
        bad = [c for c in comps if c.failure]
        if bad:
            return comps, f"output '{bad[0].name}': {bad[0].failure}"
        return comps, ""

    def evaluate(self):
        t, s = self.task, self.sub
        self.plugin_info = None
        started = time.time()
        self.say(f"task {t.name} ({t.track} track), submission {s.dir} ({s.kind})")
        cands = []
        try:
            base = self.start_baseline()
            cands.append(base)
            self.say(f"baseline: {base.runtime}")
            sub = self.start_submission()
            cands.append(sub)
            self.say(f"submission: {sub.runtime}")

            # Accuracy: every trial on both, compared output by output.
            trials = []
            for k in range(t.trials):
                seed = t.trial_seed + k
                inputs_file = save_inputs(make_inputs(t.inputs, seed), self.work / f"inputs_trial{k}.npz")
                try:
                    ref = self.run_outputs(base, inputs_file, f"trial {k}")
                except CandidateFailure as e:
                    raise EvaluateError(f"the baseline fails on trial {k} (seed {seed}): {e}", t.baseline.path) from None
                if k == 0:
                    self.ref0 = ref
                rec = {"trial": k, "seed": seed}
                try:
                    got = self.run_outputs(sub, inputs_file, f"trial {k}")
                    comps, failure = self.compare(ref, got)
                except CandidateFailure as e:
                    comps, failure = None, str(e)
                    if e.fatal:
                        sub.worker.close()
                        sub.worker = None
                rec["outputs"] = [c.to_json() for c in comps] if comps else []
                if comps:
                    rec["mae"] = max(c.mae for c in comps)
                    rec["max_ae"] = max(c.max_ae for c in comps)
                    rec["cosine"] = min(c.cosine for c in comps)
                    rec["allclose"] = all(c.allclose for c in comps)
                rec["failure"] = failure or None
                trials.append(rec)
                self.say(f"trial {k + 1}/{t.trials} (seed {seed}): "
                         + (f"FAILED: {failure.splitlines()[0]}" if failure else
                            f"MAE {rec['mae']:.3g}, max-AE {rec['max_ae']:.3g}, cosine {rec['cosine']:.6f}"))
                if failure:
                    sub.failure = f"trial {k} (seed {seed}): {failure}"
                    break

            # Peers: started now, compared on trial 0, timed with the others.
            peers = []
            for name, start in self.peer_candidates():
                label = {"onnxruntime": "ONNX Runtime", "openvino": "OpenVINO", "pytorch": "PyTorch (torch.export)",
                         "ferry": "ferry CPU backend (its own kernels)"}[name]
                c = Candidate(f"peer:{name}", label)
                try:
                    c.worker = start()
                    c.runtime = c.worker.ready.get("runtime", "")
                    got = self.run_outputs(c, self.work / "inputs_trial0.npz", "trial 0")
                    comps, failure = self.compare(self.ref0, got)
                    c.comparison = [x.to_json() for x in comps or []]
                    if failure:
                        c.failure = failure
                except CandidateFailure as e:
                    c.failure = str(e).splitlines()[0]
                    if c.worker:
                        c.worker.close()
                    c.worker = None
                self.say(f"peer {name}: " + (c.runtime or "") + (f" (unavailable: {c.failure})" if c.failure and
                                                                   not c.worker else ""))
                peers.append(c)
                cands.append(c)

            # Timing: rounds alternate the order, so drift hits every candidate alike.
            timed = [c for c in [base, sub] + peers if c.worker is not None]
            inputs0 = self.work / "inputs_trial0.npz"
            for r in range(t.rounds):
                order = timed if r % 2 == 0 else list(reversed(timed))
                for c in order:
                    if c.worker is None:
                        continue
                    try:
                        reply = c.worker.request({"cmd": "time", "inputs": str(inputs0), "warmup": t.warmup,
                                                  "iters": t.iters}, t.timeout_s, f"timing round {r}")
                        c.samples.extend(reply["ns"])
                    except CandidateFailure as e:
                        if c is base:
                            raise EvaluateError(f"the baseline fails while timing: {e}", t.baseline.path) from None
                        c.failure = c.failure or f"timing round {r}: {e}"
                        if e.fatal:
                            c.worker.close()
                            c.worker = None
                self.say(f"timing round {r + 1}/{t.rounds} done")
        finally:
            for c in cands:
                if c.worker is not None:
                    c.worker.close()

        checks = quality.quality_checks(s, t.score, self.work / "plugin-build", max(t.timeout_s, 300.0),
                                        self.o.review or None, env=self._test_env())
        result = self.result(base, sub, peers, trials, checks, time.time() - started)
        return result

    def _test_env(self):
        env = dict(self.env)
        env["FERRY_TASK_DIR"] = str(self.task.dir.resolve())
        try:
            env["FERRY_BIN"] = self.ferry_bin or find_ferry_bin(self.o.ferry_bin)
        except EvaluateError:
            pass
        try:
            env["FERRY_INCLUDE_DIR"] = str(find_include_dir())
        except EvaluateError:
            pass
        return plugin_env(env)

    # --- the result --------------------------------------------------------------------
    def stats(self, c):
        if not c.samples:
            return None
        a = np.asarray(c.samples, dtype=np.float64)
        mean = float(a.mean())
        return {"samples": len(a), "p50_ns": float(np.percentile(a, 50)), "p90_ns": float(np.percentile(a, 90)),
                "mean_ns": mean, "min_ns": float(a.min()), "throughput_per_s": 1e9 / mean,
                "items_per_s": 1e9 / mean * self.task.batch()}

    def result(self, base, sub, peers, trials, checks, elapsed):
        t, rule = self.task, self.task.score
        failure = sub.failure
        ok_trials = [x for x in trials if not x.get("failure")]
        metric = None
        if ok_trials and not failure:
            metric = max(x[rule.acc_metric] for x in ok_trials)
        acc = score.accuracy_points(rule, metric, failure.splitlines()[0] if failure else "")
        bstat, sstat = self.stats(base), self.stats(sub)
        key = rule.perf_statistic + "_ns" if rule.perf_statistic != "mean" else "mean_ns"
        perf = score.performance_points(rule, bstat[key] if bstat else None, sstat[key] if sstat else None,
                                        acc.points, failure.splitlines()[0] if failure else "")
        qual = score.quality_points(rule, checks)
        total, max_total = score.total([perf, acc, qual])
        accuracy = {"metric": rule.acc_metric, "trials": trials}
        if ok_trials:
            accuracy.update(mae=max(x["mae"] for x in ok_trials), max_ae=max(x["max_ae"] for x in ok_trials),
                            cosine=min(x["cosine"] for x in ok_trials))
        accuracy["correct"] = bool(not failure and len(ok_trials) == t.trials and all(x["allclose"] for x in ok_trials))
        accuracy["tolerance"] = {"atol": t.atol, "rtol": t.rtol}
        speedup = (bstat[key] / sstat[key]) if bstat and sstat else None

        def cand_json(c):
            j = {"label": c.label, "runtime": c.runtime, "failure": c.failure or None, "latency": self.stats(c)}
            if c.comparison:
                j["accuracy_trial0"] = c.comparison
            return j

        res = {
            "format": RESULT_FORMAT,
            "version": RESULT_VERSION,
            "status": "failed" if failure else "ok",
            "task": {"name": t.name, "title": t.title, "track": t.track, "dir": str(t.dir)},
            "submission": {"kind": self.sub.kind, "dir": str(self.sub.dir), "description": self.sub.describe(),
                           "runtime": sub.runtime, "plugin": self.plugin_info,
                           "library": str(self.sub.library) if self.sub.library else None},
            "failure": failure or None,
            "accuracy": _clean(accuracy),
            "timing": {"rounds": t.rounds, "iters": t.iters, "warmup": t.warmup, "threads": self.threads,
                       "statistic": rule.perf_statistic, "batch": t.batch(),
                       "speedup": speedup, "fast_p": bool(accuracy["correct"] and speedup and speedup > 1.0),
                       "candidates": {c.key: cand_json(c) for c in [base, sub] + peers}},
            "score": {"performance": perf.to_json(), "accuracy": acc.to_json(), "quality": qual.to_json(),
                      "total": round(total, 4), "max": max_total,
                      "rule": {"performance": {"points": rule.perf_points, "statistic": rule.perf_statistic,
                                               "cap": rule.perf_cap, "requires_accuracy": rule.perf_requires_accuracy},
                               "accuracy": {"metric": rule.acc_metric,
                                            "bands": [{"below": b.below, "points": b.points} for b in rule.acc_bands]},
                               "quality": {"tests": rule.q_tests, "readme": rule.q_readme, "lint": rule.q_lint,
                                           "reviewer": rule.q_reviewer}}},
            "work_dir": str(self.work) if self.keep_work else None,
            "elapsed_s": round(elapsed, 1),
        }
        return _clean(res)


def _clean(obj):
    """JSON-safe: inf/nan -> None, numpy scalars -> Python."""
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def invalid_result(o, message):
    return {"format": RESULT_FORMAT, "version": RESULT_VERSION, "status": "invalid",
            "task": {"dir": str(o.task)}, "submission": {"dir": str(o.submission)}, "failure": message,
            "score": {"total": 0.0}}
