"""User decompositions of custom ops (docs/repair.md, "Op libraries").

An op library is text: one `op DOMAIN.TYPE {attributes}` line and one text-IR
graph per custom op. ferry's ONNX importer inlines the graph in place of every
node of that op (the node's inputs bind the graph's inputs, `$name` the node's
attributes):

    import ferry
    ferry.register_ops('''
    op com.example.ScaledTanh {alpha: float = 1.0}
    graph scaled_tanh (%x: f32[*]) -> (%y) {
      %a = const f32[] [$alpha]
      %t = Tanh(%x)
      %y = Mul(%t, %a)
    }
    ''', reference={"com.example.ScaledTanh": lambda x, alpha=1.0: alpha * np.tanh(x)})
    model = ferry.load("model_with_custom_op.onnx")

`reference` gives each op's meaning as a Python function (numpy arrays in, an
array or a tuple of arrays out, the node's attributes as keyword arguments):
`check(...)` and `ferry convert --op-library FILE.py --check-repairs` compare
the decomposition with it. Entries registered here apply to every later
`ferry.load` / `ferry.inspect` in the process (`clear()` forgets them).

The CLI takes a library file with `--op-library FILE`: a text file, or a
Python file that calls `ferry.register_ops` (run by the Python bridge, which
prints the entries for the C++ side: `python -m ferry.op_library dump FILE.py --out TEXT`).
A model never names a library: only the user's own command line or program does.
"""

import argparse
import os
import runpy
import sys

_ENTRIES = []  # library texts, in registration order
_REFERENCES = {}  # "domain.Type" -> callable


def register_ops(library, reference=None):
    """Registers op library entries: `library` is their text or the path of a text file.

    `reference` maps "domain.Type" to a Python function computing the op (for the checks).
    """
    if not isinstance(library, str):
        raise TypeError(f"register_ops() takes the library text or a path, got {type(library).__name__}")
    text = library
    if "\n" not in library and os.path.isfile(library):
        with open(library, encoding="utf-8") as f:
            text = f.read()
    for name, fn in (reference or {}).items():
        if not callable(fn):
            raise TypeError(f"reference for {name!r} is not callable")
    _ENTRIES.append(text)
    _REFERENCES.update(reference or {})


def registered_text():
    """Every registered entry, as one library text ("" when none)."""
    return "\n".join(_ENTRIES)


def reference_for(domain, op_type):
    """The registered reference function of DOMAIN.TYPE, or None."""
    return _REFERENCES.get(f"{domain}.{op_type}" if domain else op_type) or _REFERENCES.get(f".{op_type}")


def clear():
    """Forgets every registered entry and reference."""
    _ENTRIES.clear()
    _REFERENCES.clear()


def run_library_file(path):
    """Runs a Python op library file (it calls register_ops); the user's own file, never a model's."""
    if not path.endswith(".py"):
        raise ValueError(f"{path}: a Python op library is a .py file")
    runpy.run_path(path, run_name="__ferry_op_library__")


def check(op, inputs, attrs=None, rtol=1e-4, atol=1e-5):
    """Checks the registered decomposition of `op` ("domain.Type") against its reference.

    Builds a one-node ONNX model of the op on `inputs` (numpy arrays), imports it
    with the registered library, runs it on ferry's reference backend and compares
    every output with the reference function's. Returns the largest absolute
    difference; raises AssertionError naming the output and element that differ.
    """
    import numpy as np
    import onnx
    from onnx import helper

    from . import load

    domain, _, op_type = op.rpartition(".")
    fn = reference_for(domain, op_type)
    if fn is None:
        raise LookupError(f"no reference registered for {op}")
    attrs = attrs or {}
    want = fn(*inputs, **attrs)
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    ins = [f"x{i}" for i in range(len(inputs))]
    outs = [f"y{i}" for i in range(len(want))]
    node = helper.make_node(op_type, ins, outs, domain=domain, **attrs)
    graph = helper.make_graph(
        [node], "op_library_check",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in zip(ins, inputs)],
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.asarray(w).dtype), None) for n, w in zip(outs, want)])
    opsets = [helper.make_opsetid("", 21)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "node.onnx")
        onnx.save(model, path)
        got = load(path).compile(backend="reference").run(dict(zip(ins, inputs)))
    worst = 0.0
    for name, w in zip(outs, want):
        g, w = np.asarray(got[name], dtype=np.float64), np.asarray(w, dtype=np.float64)
        if g.shape != w.shape:
            raise AssertionError(f"{op}: output {name} has shape {g.shape}, the reference gives {w.shape}")
        bad = np.abs(g - w) > atol + rtol * np.abs(w)
        if bad.any():
            i = np.unravel_index(np.argmax(bad), bad.shape)
            raise AssertionError(f"{op}: output {name}{list(i)} is {g[i]}, the reference gives {w[i]}")
        if g.size:
            worst = max(worst, float(np.max(np.abs(g - w))))
    return worst


def _dump(args):
    # Run as `python -m`, this file is __main__: the registry the library fills is ferry.op_library's.
    from ferry import op_library

    op_library.run_library_file(args.library)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(op_library.registered_text())
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m ferry.op_library", description="ferry op libraries (Python side)")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="run a Python op library file and write its entries as library text")
    d.add_argument("library", help="the .py file (it calls ferry.register_ops)")
    d.add_argument("--out", required=True, help="the text file to write")
    args = p.parse_args(argv)
    try:
        return _dump(args)
    except Exception as e:  # the user's file: its error, in one line, for the C++ side's message
        print(f"{args.library}: {type(e).__name__}: {e}", file=sys.stderr)
        return 4


if __name__ == "__main__":
    sys.exit(main())
