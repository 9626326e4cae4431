#!/usr/bin/env python3
"""Writes the seed corpora and dictionaries for ferry's libFuzzer targets.

    fuzz/make_seeds.py OUT_DIR [--max-bytes N]

OUT_DIR/<target>/ gets the seeds of each target, OUT_DIR/<target>.dict its
dictionary (libFuzzer -dict=). Everything comes from the repository:

    onnx_load_fuzz  the hand-built end-to-end ONNX models (tests/models/gen/
                    make_onnx_models.py, written to OUT_DIR/_models), the
                    malformed-model corpus (tests/bad_inputs/gen_bad_inputs.py),
                    and the fuzz regressions; files over --max-bytes are left out
    text_ir_fuzz    every text-IR graph written as a raw string in the C++ tests
                    (tests/**/*_test.cc), and the corpus's .ferry files
    npy_fuzz        .npy files of every dtype ferry reads, written with numpy,
                    and the corpus's .npy files
    npz_fuzz        np.savez / np.savez_compressed archives
    tf_load_fuzz    frozen GraphDefs, saved_model.pb files and checkpoint indexes
                    (variables.index) of the generated TensorFlow test models
                    (tests/models/generated/tf/, when present: they need
                    TensorFlow to make), and the corpus's TensorFlow cases
                    (written without TensorFlow, tests/bad_inputs/tf_cases.py)
    pt2_load_fuzz   the corpus's .pt2 archives (tests/bad_inputs/torch_cases.py,
                    written without torch) whole, and their program and weights
                    JSON for the modes that build the archive in memory

Dictionaries: op names and attribute names from src/ir/ops.def for the ONNX
and text-IR targets; format keywords for .npy and .npz.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TARGETS = ["onnx_load_fuzz", "text_ir_fuzz", "npy_fuzz", "npz_fuzz", "tf_load_fuzz", "pt2_load_fuzz"]


def put(out: Path, data: bytes, max_bytes: int) -> bool:
    """Stores `data` under its content hash (libFuzzer's own naming); skips big files."""
    if len(data) > max_bytes or not data:
        return False
    out.mkdir(parents=True, exist_ok=True)
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
    return True


def op_table():
    """(op names, attribute names) from src/ir/ops.def."""
    text = (REPO / "src/ir/ops.def").read_text()
    ops = sorted(set(re.findall(r"^FERRY_OP\((\w+)", text, re.M)))
    attrs = sorted(set(re.findall(r"\b(?:ATTR|REQ|OPT)\((\w+),", text)))
    return ops, attrs


def write_dict(path: Path, words):
    lines = []
    for w in sorted(set(words)):
        esc = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else f"\\x{ord(c):02x}" for c in w)
        lines.append(f'"{esc}"')
    path.write_text("\n".join(lines) + "\n")


def onnx_seeds(out: Path, work: Path, max_bytes: int):
    py = sys.executable
    models = work / "_models"
    subprocess.run([py, str(REPO / "tests/models/gen/make_onnx_models.py"), str(models)], check=True,
                   stdout=subprocess.DEVNULL)
    bad = work / "_bad_inputs"
    subprocess.run([py, str(REPO / "tests/bad_inputs/gen_bad_inputs.py"), str(bad)], check=True,
                   stdout=subprocess.DEVNULL)
    n = 0
    for f in sorted(models.glob("*.onnx")) + sorted(bad.rglob("*.onnx")):
        if f.is_file() and not f.is_symlink():
            n += put(out, f.read_bytes(), max_bytes)
    return n, bad


def text_ir_seeds(out: Path, bad: Path, max_bytes: int):
    n = 0
    raw = re.compile(r'R"(\w*)\((.*?)\)\1"', re.S)
    for f in sorted((REPO / "tests").rglob("*_test.cc")):
        for m in raw.finditer(f.read_text(errors="replace")):
            body = m.group(2)
            if re.search(r"^\s*(//.*\n\s*)*graph\b", body):
                n += put(out, body.encode(), max_bytes)
    for f in sorted(bad.rglob("*.ferry")):
        n += put(out, f.read_bytes(), max_bytes)
    return n


def npy_seeds(out: Path, bad: Path, max_bytes: int):
    import io
    rng = np.random.default_rng(0)
    arrays = [np.zeros((), np.float32), np.arange(6, dtype=np.int64).reshape(2, 3), np.array([True, False]),
              np.zeros((0, 3), np.float16), rng.standard_normal((2, 2, 2)).astype(np.float64),
              np.array([-1, 2], np.int8), np.array([1, 2], np.uint16), np.array([7], np.uint64),
              np.array([1, 2], np.int32), np.array([3], np.uint8), np.array([1.5], np.float32)]
    n = 0
    for a in arrays:
        buf = io.BytesIO()
        np.save(buf, a)
        n += put(out, buf.getvalue(), max_bytes)
    buf = io.BytesIO()  # format 2.0 (4-byte header length)
    np.lib.format.write_array(buf, np.ones(3, np.float32), version=(2, 0))
    n += put(out, buf.getvalue(), max_bytes)
    for f in sorted(bad.rglob("*.npy")):
        if f.is_file():
            n += put(out, f.read_bytes(), max_bytes)
    return n


def npz_seeds(out: Path, max_bytes: int):
    import io
    n = 0
    for save in (np.savez, np.savez_compressed):
        for arrays in ({"x": np.arange(4, dtype=np.float32)},
                       {"a": np.zeros((2, 2), np.int64), "b": np.array([True]), "c": np.float64(1.5)}):
            buf = io.BytesIO()
            save(buf, **arrays)
            n += put(out, buf.getvalue(), max_bytes)
    return n


def tf_seeds(out: Path, bad: Path, max_bytes: int):
    """GraphDefs, saved_model.pb files and checkpoint indexes: generated models (if any), then the corpus."""
    n = 0
    gen = REPO / "tests/models/generated/tf"
    files = sorted(gen.glob("*/frozen.pb")) + sorted(gen.glob("*/saved_model/saved_model.pb")) + \
        sorted(gen.glob("*/saved_model/variables/variables.index")) if gen.is_dir() else []
    files += sorted(f for f in bad.glob("tf_*/**/*") if f.name.endswith((".pb", ".index")))
    for f in files:
        if f.is_file() and not f.is_symlink():
            n += put(out, f.read_bytes(), max_bytes)
    return n


def pt2_seeds(out: Path, bad: Path, max_bytes: int):
    """The corpus's .pt2 archives (mode byte 0), and their program and weights JSON (modes 1 and 2)."""
    import zipfile

    n = 0
    for f in sorted(bad.glob("torch_*/**/*.pt2")):
        data = f.read_bytes()
        n += put(out, b"\x00" + data, max_bytes)
        try:
            with zipfile.ZipFile(f) as z:
                for name in z.namelist():
                    if name.endswith("models/model.json"):
                        n += put(out, b"\x01" + z.read(name), max_bytes)
                    elif name.endswith("_weights_config.json"):
                        n += put(out, b"\x02" + z.read(name), max_bytes)
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError):
            pass
    return n


def pt2_words():
    """ATen targets ferry imports (src/frontends/torch/import_table.def) and the schema's keys."""
    text = (REPO / "src/frontends/torch/import_table.def").read_text()
    targets = ["torch.ops." + t for t in re.findall(r'^(?:ROW|UNARY|SKIP)\("([^"]+)"', text, re.M)]
    return targets + ['"as_tensor"', '"as_tensors"', '"as_int"', '"as_ints"', '"as_float"', '"as_sym_int"',
                      '"as_sym_ints"', '"as_name"', '"as_none"', '"as_bool"', '"as_expr"', '"expr_str"',
                      '"as_scalar_type"', '"as_string"', '"user_input"', '"parameter"', '"buffer"',
                      '"tensor_constant"', '"user_output"', '"buffer_mutation"', '"tensor_values"', '"sizes"',
                      '"strides"', '"storage_offset"', '"dtype"', '"use_pickle"', '"path_name"', '"tensor_meta"',
                      "Symbol('s0', positive=True, integer=True)", "Integer(", "Mul(", "Add(", "Infinity",
                      "-Infinity", "NaN", "weight_0", "aten.relu_.default", "aten.add_.Tensor"]


def tf_words():
    """TensorFlow op names ferry imports (src/frontends/tensorflow/import_table.def) and format words."""
    text = (REPO / "src/frontends/tensorflow/import_table.def").read_text()
    ops = re.findall(r"^(?:ROW|DIRECT|BOUND)\((\w+),", text, re.M)
    return ops + ["Placeholder", "Const", "VarHandleOp", "ReadVariableOp", "StatefulPartitionedCall",
                  "PartitionedCall", "Identity", "NoOp", "serve", "serving_default", "dtype", "shape", "value", "T",
                  "f", "shared_name", "_CHECKPOINTABLE_OBJECT_GRAPH", "VARIABLE_VALUE", ":0", ":1", "^", "w", "v",
                  "\x57\xfb\x80\x8b\x24\x75\x47\xdb"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--max-bytes", type=int, default=64 << 10, help="largest seed file kept (default 64 KiB)")
    args = ap.parse_args(argv)
    out = Path(args.out_dir)
    for t in TARGETS:
        shutil.rmtree(out / t, ignore_errors=True)
        (out / t).mkdir(parents=True)
    ops, attrs = op_table()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        n_onnx, bad = onnx_seeds(out / "onnx_load_fuzz", work, args.max_bytes)
        n_text = text_ir_seeds(out / "text_ir_fuzz", bad, args.max_bytes)
        n_npy = npy_seeds(out / "npy_fuzz", bad, args.max_bytes)
        n_tf = tf_seeds(out / "tf_load_fuzz", bad, args.max_bytes)
        n_pt2 = pt2_seeds(out / "pt2_load_fuzz", bad, args.max_bytes)
    n_npz = npz_seeds(out / "npz_fuzz", args.max_bytes)
    # Regressions are seeds too: campaigns start from the inputs that once broke ferry.
    for t in TARGETS:
        for f in sorted((REPO / "fuzz/regressions" / t).glob("*")):
            put(out / t, f.read_bytes(), 1 << 30)

    dtypes = ["f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"]
    write_dict(out / "onnx_load_fuzz.dict", ops + attrs + ["ai.onnx", "com.microsoft", "location", "offset",
                                                            "length", "data.bin", "../", "/etc/passwd"])
    write_dict(out / "text_ir_fuzz.dict", ops + attrs + dtypes + [
        "graph ", "const ", "splat(", "tensor ", "%", "@", " <- ", " -> ", "[", "]", "{", "}", "(", ")", ",", ":",
        "=", "_", "?", "*", "inf", "-inf", "nan", "true", "false", "//", '"'])
    write_dict(out / "npy_fuzz.dict", ["\x93NUMPY", "\x01\x00", "\x02\x00", "\x03\x00", "'descr'", "'fortran_order'",
                                       "'shape'", "False", "True", "'<f4'", "'<f8'", "'<f2'", "'<i8'", "'|b1'",
                                       "'|u1'", "'>f4'", "()", "(1,)", "{", "}", ": ", ", "])
    write_dict(out / "npz_fuzz.dict", ["PK\x03\x04", "PK\x01\x02", "PK\x05\x06", "PK\x06\x06", "PK\x06\x07",
                                       ".npy", "\x93NUMPY", "\x08\x00", "\x00\x00", "\x01\x00",
                                       "\xff\xff\xff\xff"])
    write_dict(out / "tf_load_fuzz.dict", tf_words())
    write_dict(out / "pt2_load_fuzz.dict", pt2_words())
    print(f"seeds: onnx_load_fuzz {n_onnx}, text_ir_fuzz {n_text}, npy_fuzz {n_npy}, npz_fuzz {n_npz}, "
          f"tf_load_fuzz {n_tf}, pt2_load_fuzz {n_pt2} -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
