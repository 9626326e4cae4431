"""The case registry (@case, CASES), the per-case directory (Ctx), expectations
(expect, both) and the error-message fragments several cases share."""

from __future__ import annotations

from pathlib import Path

import numpy as np

# Case name -> fn(ctx), in registration order: the order of the modules imported
# by cases/__init__.py, then tf_cases.py and torch_cases.py (gen_bad_inputs.py imports them).
CASES = {}


def case(fn):
    """Registers fn(ctx) -> dict (the manifest entry minus name/description)."""
    CASES[fn.__name__] = fn
    return fn


def _register(name, doc, fn):
    fn.__name__ = name
    fn.__doc__ = doc
    CASES[name] = fn


# Fragments shared by several cases (any one must appear in the error line).
PARSE = ["parse", "protobuf", "not a valid", "not an onnx", "malformed", "corrupt", "decode"]
UNDEFINED = ["undefined", "not defined", "no producer", "unknown value", "not produced", "missing", "does not exist",
             "no value"]
DUPLICATE = ["duplicate", "more than once", "already", "twice", "redefin", "defined again", "not unique"]
TOO_LARGE = ["too large", "too big", "exceed", "overflow", "limit", "absurd", "elements", "bytes"]
OUT_OF_RANGE = ["out of range", "out of bounds", "outside", "beyond", "past the end", "exceeds"]
ESCAPE = ["outside", "escape", "not allowed", "refus", "must stay", "not inside", "within"]
INVALID = ["invalid", "must", "not", "expected", "out of range", "bad"]
DTYPE = ["type", "dtype", "like the first input"]
UNSUPPORTED = ["unsupported", "not supported"]


class Ctx:
    """Where a case writes its files; helpers for the usual small models."""

    def __init__(self, out_dir, name):
        self.root = Path(out_dir)
        self.dir = self.root / name
        self.dir.mkdir(parents=True, exist_ok=True)

    def rel(self, path):
        return str(Path(path).relative_to(self.root))

    def save(self, model, filename="model.onnx"):
        """Serializes without checking; returns the path relative to OUT_DIR."""
        path = self.dir / filename
        path.write_bytes(model.SerializeToString() if hasattr(model, "SerializeToString") else model)
        return self.rel(path)

    def npy(self, array, filename):
        path = self.dir / filename
        np.save(path, array)
        return self.rel(path)


def expect(exit=(2,), fragments=(), mentions=()):
    return {"exit": list(exit), "fragments": list(fragments), "mentions": list(mentions)}


def both(**kw):
    """The same expectation for run and inspect."""
    e = expect(**kw)
    return {"run": e, "inspect": e}
