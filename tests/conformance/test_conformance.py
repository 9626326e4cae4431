"""The ONNX backend node tests through `ferry conformance`, held to the committed baseline.

The suite is generated from the installed onnx release into
tests/conformance/generated/ (gitignored; gen_node_tests.py, cached: regenerated
only when the onnx version or the generator changes) and run with -j2. The
test fails when a case listed in baseline.json no longer passes or the
in-scope pass rate drops below the baseline's. When the rate goes up, refresh
the baseline (docs/conformance.md):

    build/ferry conformance tests/conformance/generated -j2 \
        --write-baseline tests/conformance/baseline.json

FERRY_BIN names the ferry binary (default build/ferry). Under CI=true a
missing binary or onnx package fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "baseline.json"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
sys.path.insert(0, str(HERE))


def unavailable(what):
    if IN_CI:
        pytest.fail(f"{what} (CI=true: missing prerequisites are failures)", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="module")
def ferry(ferry_cli):
    return ferry_cli


@pytest.fixture(scope="module")
def suite():
    try:
        import onnx  # noqa: F401
    except ImportError as e:
        unavailable(f"onnx not importable: {e}")
    import gen_node_tests

    out = gen_node_tests.DEFAULT_DIR
    if not gen_node_tests.is_current(out):
        # In a fresh process: onnx's collect_testcases() caches its first result, and
        # other test modules collect only their own ops' cases in this one.
        subprocess.run([sys.executable, str(Path(gen_node_tests.__file__)), "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def report(ferry, suite, tmp_path_factory):
    out = tmp_path_factory.mktemp("conformance") / "report.json"
    proc = subprocess.run(
        [str(ferry), "conformance", str(suite), "-j2", "--timeout", "60", "--json", str(out),
         "--baseline", str(BASELINE)],
        capture_output=True, text=True, timeout=900)
    return proc, json.loads(out.read_text())


def test_no_regression_against_the_baseline(report):
    proc, data = report
    summary = data["summary"]
    print(f"in-scope pass rate {summary['passed']}/{summary['in_scope']} = {summary['pass_rate']:.2%}")
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-4000:]}"
    assert "no regressions" in proc.stdout


def test_baseline_is_this_suite(report):
    """The baseline was written from the same onnx release, and its numbers add up."""
    import onnx

    _, data = report
    base = json.loads(BASELINE.read_text())
    assert base["onnx"] == onnx.__version__ == data["onnx"]
    assert base["passed"] == len(base["cases"]) == len(set(base["cases"]))
    assert base["cases"] == sorted(base["cases"])
    names = {c["name"] for c in data["cases"]}
    assert set(base["cases"]) <= names


def test_every_case_is_classified(report):
    """Each case has exactly one outcome; everything that did not pass says why."""
    _, data = report
    cases = data["cases"]
    assert len(cases) == data["summary"]["total"] > 1000
    for c in cases:
        assert c["outcome"] in ("passed", "failed", "unsupported", "out_of_scope"), c
        assert (c["outcome"] == "passed") == ("reason" not in c), c
        assert c["op"], c
    counts = {k: sum(c["outcome"] == k for c in cases) for k in ("passed", "failed", "unsupported", "out_of_scope")}
    assert counts == {k: data["summary"][k] for k in counts}
    per_op = {k: sum(v[k] for v in data["ops"].values()) for k in counts}
    assert per_op == counts


def test_a_wrong_expected_output_fails(ferry, suite, tmp_path):
    """The comparison is real: perturb one expected value of a passing case and it fails."""
    import shutil

    import numpy as np
    from onnx import numpy_helper, TensorProto

    case = tmp_path / "test_add"
    shutil.copytree(suite / "node" / "test_add", case)
    out_pb = case / "test_data_set_0" / "output_0.pb"
    t = TensorProto()
    t.ParseFromString(out_pb.read_bytes())
    a = numpy_helper.to_array(t).copy()
    ok = subprocess.run([str(ferry), "conformance", str(case)], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "1 passed" in ok.stdout, ok.stdout
    a.flat[3] += np.float32(0.01) * max(1.0, abs(float(a.flat[3])))
    out_pb.write_bytes(numpy_helper.from_array(a, t.name).SerializeToString())
    bad = subprocess.run([str(ferry), "conformance", str(case)], capture_output=True, text=True, timeout=60)
    assert "1 failed" in bad.stdout, bad.stdout
    assert "flat index 3" in bad.stdout, bad.stdout
