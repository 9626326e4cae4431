"""The malformed-model corpus (gen_bad_inputs.py) through `ferry run` and `ferry inspect`.

For each case: the exit code is one the manifest allows (2 for a model or input
error, 1 only for usage errors, 0 where the case must run); a failure is ONE
line on stderr naming the offending file, containing one of the expected
fragments and every required name (node, tensor, input); nothing from a
sanitizer, a crash or an internal assertion appears; no command takes more CPU
time than a generous bound that only catches blow-ups (TIME_LIMIT_S: four times
issue 7's "loads or fails within 5 s", 5x that for a sanitizer build; whether
ferry holds the 5 s itself is measured by bench/import_bench.py, and whether work
grows linearly with the model by test_scaling.py, both independent of how fast
this machine is); and at most MEMORY_LIMIT_MB of memory: address space
(RLIMIT_AS) for a plain build, resident memory (ASan's hard_rss_limit_mb) for a
sanitizer build, whose shadow memory makes an address-space limit meaningless.

Works with any build: point FERRY_BIN at an ASan+UBSan binary
(cmake -DFERRY_SANITIZE=ON -B build-asan) and a sanitizer report fails the case.
Under CI=true a missing binary is a failure, not a skip.
"""

from __future__ import annotations

import mmap
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import gen_bad_inputs  # noqa: E402

# CPU seconds per command: a guard against blow-ups (a quadratic path, a hang that
# burns CPU), not a speed test, so it must hold on the slowest machine CI may get.
# Issue 7's bound, "a model of 10 MB or less loads or fails within 5 s", is measured
# by bench/import_bench.py (the heaviest cases, the 9 MB 250k-node chain and 100k
# initializers, inspect in ~1.2-2.5 s of CPU in a release build on a 2-core AMD EPYC);
# here it is 4x that. `run` also executes the model and writes every output (50,000
# .npy files for many_graph_outputs), so it gets twice as much.
TIME_LIMIT_S = {"inspect": 20, "run": 40}
# ASan+UBSan builds run ~2-5x slower, allocation-heavy loading at the top of that range.
SANITIZER_SLOWDOWN = 5
WALL_LIMIT_S = 300  # a hang guard only (above the sanitizer CPU bounds)
MEMORY_LIMIT_MB = 4096
slowdown = 1  # SANITIZER_SLOWDOWN once the `ferry` fixture finds a sanitizer build
sanitized = False  # set by the `ferry` fixture
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# Signs of a crash or of a bug ferry caught in itself rather than in the model.
FORBIDDEN = ["Sanitizer", "runtime error:", "internal check failed", "Segmentation", "stack overflow",
             "terminate called", "Aborted", "core dumped", "std::bad_alloc"]


@pytest.fixture(scope="session")
def ferry():
    global slowdown, sanitized
    path = Path(os.environ.get("FERRY_BIN", REPO / "build" / "ferry"))
    if not path.is_absolute():
        path = REPO / path
    if not (path.is_file() and os.access(path, os.X_OK)):
        msg = f"ferry binary not found at {path} (set FERRY_BIN)"
        if IN_CI:
            pytest.fail(msg + " (CI=true: missing prerequisites are failures)", pytrace=False)
        pytest.skip(msg)
    if is_sanitized(path):
        slowdown = SANITIZER_SLOWDOWN
        sanitized = True
    return path


def is_sanitized(path):
    """True for an ASan build (its runtime's entry point is linked in)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return m.find(b"__asan_init") >= 0


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """Generates the corpus once per session; returns (root dir, {case name: manifest entry})."""
    root = tmp_path_factory.mktemp("bad_inputs")
    manifest = gen_bad_inputs.generate(root)
    return root, {c["name"]: c for c in manifest["cases"]}


def run(cmd, cwd):
    """Runs ferry; fails past TIME_LIMIT_S[command] x slowdown of CPU time (or a hang of WALL_LIMIT_S).

    CPU time, not wall time, is what must stay under the limit: on a loaded
    2-core CI machine wall time says more about the neighbours than about ferry."""
    env = dict(os.environ)
    preexec = None
    if sanitized:
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), f"hard_rss_limit_mb={MEMORY_LIMIT_MB}"]))
    else:
        def preexec():
            limit = MEMORY_LIMIT_MB << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, errors="replace",
                              timeout=WALL_LIMIT_S, cwd=cwd, env=env, preexec_fn=preexec)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {WALL_LIMIT_S} s: {' '.join(map(str, cmd))}", pytrace=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    limit = TIME_LIMIT_S[str(cmd[1])] * slowdown
    assert cpu <= limit, f"took {cpu:.1f} s of CPU time (limit {limit} s): {' '.join(map(str, cmd))}"
    return proc


def check(proc, expect, case, what):
    """Asserts `proc` behaved as `expect` (a manifest run/inspect entry) says."""
    both = proc.stdout + proc.stderr
    for bad in FORBIDDEN:
        assert bad not in both, f"{what}: {bad!r} in the output:\n{proc.stderr[-3000:]}"
    assert proc.returncode >= 0, f"{what}: killed by signal {-proc.returncode}\n{proc.stderr[-3000:]}"
    assert proc.returncode in expect["exit"], \
        f"{what}: exit {proc.returncode}, expected {expect['exit']}\nstderr:\n{proc.stderr[-3000:]}"
    if proc.returncode == 0:
        # A case allowed to succeed still has to name what it was asked to (inspect's op list).
        for m in expect["mentions"]:
            options = m if isinstance(m, list) else [m]
            assert any(o in both for o in options), f"{what}: output does not mention {m!r}:\n{both[-3000:]}"
        return
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode == 1:  # usage errors: clear, but they may add a pointer to --help
        text = proc.stderr.lower()
        assert any(f.lower() in text for f in expect["fragments"]), \
            f"{what}: usage error without any of {expect['fragments']}:\n{proc.stderr}"
        return
    assert len(lines) == 1, f"{what}: expected a one-line error, got {len(lines)} lines:\n{proc.stderr[-3000:]}"
    line = lines[0]
    if case.get("file"):
        name = Path(case["file"]).name
        assert name in line, f"{what}: the error does not name the file {name!r}: {line}"
    if expect["fragments"]:
        assert any(f.lower() in line.lower() for f in expect["fragments"]), \
            f"{what}: the error has none of {expect['fragments']}: {line}"
    for m in expect["mentions"]:
        options = m if isinstance(m, list) else [m]
        assert any(o in line for o in options), f"{what}: the error does not mention {m!r}: {line}"


@pytest.mark.parametrize("name", list(gen_bad_inputs.CASES))
def test_run(name, ferry, corpus, tmp_path):
    root, cases = corpus
    case = cases[name]
    if case.get("skip"):
        pytest.skip(case["skip"])
    # The reference backend: the corpus checks the loader and the interpreter. The
    # default cpu backend also runs the whole optimizer first, which takes 11-20 s of
    # CPU on the 100k-250k-node cases (per-pass whole-graph work; see the notes).
    cmd = [ferry, "run", root / case["model"], "--backend", "reference"]
    for input_name, npy in case["inputs"].items():
        cmd += ["--input", f"{input_name}={root / npy}"]
    cmd += case["extra_args"] + ["--output-dir", tmp_path / "out"]
    proc = run(cmd, cwd=tmp_path)
    check(proc, case["run"], case, f"ferry run ({case['description']})")
    if case.get("output_equals_input") and proc.returncode == 0:
        outs = list((tmp_path / "out").glob("*.npy"))
        assert len(outs) == 1, outs
        (npy,) = case["inputs"].values()
        np.testing.assert_array_equal(np.load(outs[0]), np.load(root / npy))


@pytest.mark.parametrize("name", list(gen_bad_inputs.CASES))
def test_inspect(name, ferry, corpus, tmp_path):
    root, cases = corpus
    case = cases[name]
    if case.get("skip"):
        pytest.skip(case["skip"])
    if case["inspect"] is None:
        pytest.skip("concerns run's inputs or command line, not the model")
    proc = run([ferry, "inspect", root / case["model"]], cwd=tmp_path)
    check(proc, case["inspect"], case, f"ferry inspect ({case['description']})")


def test_corpus_is_complete(corpus):
    """Every case has a model file, an expectation, and a file the error must name."""
    root, cases = corpus
    assert len(cases) >= 150
    for name, c in cases.items():
        assert (root / c["model"]).is_file() or c.get("skip") or c.get("model_not_a_file"), name
        assert c["run"]["exit"], name
        for path in c["inputs"].values():
            assert (root / path).exists(), (name, path)
