"""Writes the ONNX backend node tests of the installed onnx release to disk.

    .venv/bin/python tests/conformance/gen_node_tests.py [-o DIR] [--force]

The onnx wheel ships the node-test generators (onnx.backend.test.case.node)
but not their data, and `python -m onnx.backend.test.cmd_tools generate-data`
writes only the model tests. This script runs the node generators and writes
each case the way the onnx repository stores them:

    DIR/node/<case>/model.onnx
    DIR/node/<case>/test_data_set_0/input_<i>.pb, output_<i>.pb

Tensors are TensorProto; sequence / optional / map values are written as
their protos (ferry's runner classifies those cases out of scope before
reading them). Nothing is downloaded.

Deterministic: numpy's global generator (which many generators draw from
without seeding) is seeded before collection, so two runs write identical
files. DIR/STAMP records the onnx version and this script's hash; when both
match, the cache is reused and nothing is rewritten (--force rewrites).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_DIR = HERE / "generated"
STAMP = "STAMP.json"


def stamp() -> dict:
    import onnx

    digest = hashlib.sha256((HERE / "gen_node_tests.py").read_bytes()).hexdigest()[:16]
    return {"onnx": onnx.__version__, "generator": digest}


def is_current(out: Path) -> bool:
    try:
        return json.loads((out / STAMP).read_text()) == stamp()
    except (OSError, ValueError):
        return False


def serialize(value, value_info) -> bytes:
    from onnx import TensorProto, numpy_helper

    t = value_info.type
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def write_case(case, root: Path) -> None:
    d = root / case.name
    d.mkdir(parents=True)
    (d / "model.onnx").write_bytes(case.model.SerializeToString())
    graph = case.model.graph
    for k, (inputs, outputs) in enumerate(case.data_sets):
        ds = d / f"test_data_set_{k}"
        ds.mkdir()
        for i, v in enumerate(inputs):
            (ds / f"input_{i}.pb").write_bytes(serialize(v, graph.input[i]))
        for i, v in enumerate(outputs):
            (ds / f"output_{i}.pb").write_bytes(serialize(v, graph.output[i]))
    if (case.rtol, case.atol) != (1e-3, 1e-7):  # the loader's defaults; others go in data.json like the repo's
        (d / "data.json").write_text(json.dumps({"rtol": case.rtol, "atol": case.atol}, sort_keys=True))


def generate(out: Path) -> int:
    np.random.seed(0)
    random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case import node

        cases = node.collect_testcases()
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    root = tmp / "node"
    root.mkdir(parents=True)
    for case in sorted(cases, key=lambda c: c.name):
        write_case(case, root)
    (tmp / STAMP).write_text(json.dumps(stamp(), sort_keys=True) + "\n")
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return len(cases)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_DIR, help=f"output directory (default {DEFAULT_DIR})")
    ap.add_argument("--force", action="store_true", help="rewrite even when the cache is current")
    args = ap.parse_args()
    out = args.output.resolve()
    if not args.force and is_current(out):
        print(f"node tests up to date in {out}")
        return 0
    n = generate(out)
    print(f"wrote {n} node tests to {out / 'node'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
