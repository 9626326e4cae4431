"""`python -m ferry.evaluate` (what `ferry evaluate` runs): the command line.

Exit status: 0 the evaluation ran (whatever the score) or the template was
written; 1 usage; 2 a task or submission that cannot be evaluated.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from .task import EvaluateError

EXIT_OK, EXIT_USAGE, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"ferry: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def parse(argv):
    ap = _Parser(prog="ferry evaluate", description="Score a submission against a challenge task (docs/evaluate.md).")
    ap.add_argument("task", nargs="?", help="task directory (task.toml)")
    ap.add_argument("--submission", help="submission directory")
    ap.add_argument("--json", default="", help="write the result as JSON ('-': stdout)")
    ap.add_argument("--plot", default="", help="FILE.png or FILE.svg")
    ap.add_argument("--review", default="", help="reviewer score file (TOML)")
    ap.add_argument("--work-dir", default="")
    ap.add_argument("--ferry-bin", default="")
    ap.add_argument("--trials", type=int)
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--iters", type=int)
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--timeout", type=float)
    ap.add_argument("--peers", help="comma list: onnxruntime,pytorch,openvino,ferry")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--init", default="", help="write a submission template into DIR")
    ap.add_argument("--task", dest="init_task", default="", help="with --init: the task")
    ap.add_argument("--kind", choices=("plugin", "python", "model"))
    return ap.parse_args(argv)


def _write_json(path, obj):
    text = json.dumps(obj, indent=1)
    if path == "-":
        print(text)
    else:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n", encoding="utf-8")


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    if a.init:
        if not a.init_task:
            print("ferry: error: --init DIR needs --task TASK_DIR", file=sys.stderr)
            return EXIT_USAGE
        from .template import write_template

        try:
            kind, files = write_template(a.init, a.init_task, a.kind)
        except EvaluateError as e:
            print(f"ferry: error: {e}", file=sys.stderr)
            return EXIT_ERROR
        print(f"wrote a {kind} submission template into {a.init} ({len(files)} files):")
        for f in files:
            print(f"  {f}")
        print(f"then: ferry evaluate {a.init_task} --submission {a.init}")
        return EXIT_OK
    if not a.task or not a.submission:
        print("ferry: error: TASK_DIR and --submission DIR are required (or --init DIR --task TASK_DIR)",
              file=sys.stderr)
        return EXIT_USAGE
    for name in ("trials", "rounds", "iters", "warmup", "threads"):
        v = getattr(a, name)
        if v is not None and (v < (0 if name in ("warmup", "threads") else 1)):
            print(f"ferry: error: --{name} must be >= {0 if name in ('warmup', 'threads') else 1}", file=sys.stderr)
            return EXIT_USAGE
    if a.timeout is not None and not a.timeout > 0:
        print("ferry: error: --timeout must be > 0", file=sys.stderr)
        return EXIT_USAGE

    try:
        from . import harness
    except ImportError as e:
        print(f"ferry: error: ferry evaluate needs numpy in {sys.executable} ({e}); "
              f"install it with: {sys.executable} -m pip install -r requirements.txt", file=sys.stderr)
        return EXIT_ERROR
    from .report import format_result

    peers = [] if a.no_peers else ([p.strip() for p in a.peers.split(",") if p.strip()] if a.peers else None)
    o = harness.Options(task=a.task, submission=a.submission, json=a.json, plot=a.plot, review=a.review,
                        work_dir=a.work_dir, ferry_bin=a.ferry_bin, trials=a.trials, rounds=a.rounds, iters=a.iters,
                        warmup=a.warmup, threads=a.threads or None, timeout=a.timeout, peers=peers, quiet=a.quiet)
    h = None
    try:
        h = harness.Harness(o)
        result = h.evaluate()
    except harness.InvalidSubmission as e:
        print(f"ferry: error: {e}", file=sys.stderr)
        if a.json:
            _write_json(a.json, harness.invalid_result(o, str(e)))
        return EXIT_ERROR
    except EvaluateError as e:
        print(f"ferry: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if h is not None and not h.keep_work:  # a temporary work directory: inputs, outputs, logs, the plugin build
            shutil.rmtree(h.work, ignore_errors=True)
    if a.json != "-":
        print(format_result(result))
    if a.plot:
        from .plot import draw

        draw(result, a.plot)
        if a.json != "-":
            print(f"\nplot: {a.plot}")
    if a.json:
        _write_json(a.json, result)
    return EXIT_OK
