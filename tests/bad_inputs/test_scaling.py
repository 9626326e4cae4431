"""Work grows linearly with the model: the same chain of N and 10 N nodes through ferry.

A machine-independent form of issue 7's time bound (bench/import_bench.py measures
the bound itself): the CPU time of a command on a 10x larger model, divided by its
CPU time on the smaller one, is ~10 for linear work and ~100 for quadratic work,
whatever the machine's speed or a sanitizer's slowdown. Both times are taken
less the time of a one-node model (process start-up, loading libraries), which
would otherwise hide growth. A ratio above MAX_RATIO fails and names the
command. The small models run REPEATS times and keep the fastest (CPU time
still varies a little with cache and frequency).
"""
from __future__ import annotations

import resource
import subprocess

import onnx
import pytest
from onnx import TensorProto, helper

from test_bad_inputs import ferry, is_sanitized  # noqa: F401  (the fixture)

# Linear work gives ~10-16 here (larger graphs miss the caches more); quadratic ~100.
MAX_RATIO = 30
REPEATS = 3
COMMANDS = {
    "inspect": ["inspect"],
    "run_reference": ["run", "--backend", "reference"],
    "run_cpu": ["run"],  # the default: optimizer + compiled CPU session
}


def chain(path, n):
    """n Relu nodes in a row on a [4] input (the corpus' chain_250k_relu at any size)."""
    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("Relu", [prev], [f"r{i}"], name=f"relu{i}"))
        prev = f"r{i}"
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def cpu_seconds(cmd, cwd, repeats):
    best = None
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd, timeout=600)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert proc.returncode == 0, f"{' '.join(map(str, cmd))}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
        t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = t if best is None else min(best, t)
    return best


@pytest.fixture(scope="module")
def chains(ferry, tmp_path_factory):  # noqa: F811
    # Sanitizer builds are ~5x slower: smaller chains keep the test short; the ratio is the same.
    small = 5_000 if is_sanitized(ferry) else 20_000
    root = tmp_path_factory.mktemp("scaling")
    return chain(root / "one.onnx", 1), chain(root / "small.onnx", small), chain(root / "large.onnx", 10 * small)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_cpu_time_is_linear_in_nodes(command, ferry, chains, tmp_path):  # noqa: F811
    one, small, large = chains
    args = COMMANDS[command]
    extra = ["--output-dir", tmp_path / "out"] if args[0] == "run" else []
    t_one = cpu_seconds([ferry, *args, one, *extra], tmp_path, REPEATS)
    t_small = cpu_seconds([ferry, *args, small, *extra], tmp_path, REPEATS) - t_one
    t_large = cpu_seconds([ferry, *args, large, *extra], tmp_path, 1) - t_one
    ratio = t_large / max(t_small, 1e-3)
    assert ratio <= MAX_RATIO, (f"ferry {' '.join(args)}: {t_large:.2f} s of CPU for 10x the nodes of a model that "
                                f"takes {t_small:.2f} s (x{ratio:.0f}; linear work is ~x10, limit x{MAX_RATIO})")
