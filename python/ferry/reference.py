"""Framework references for `ferry validate`: run a model in its source framework
and write a golden directory that the C++ side compares against.

    python -m ferry.reference onnxruntime MODEL --inputs IN.npz|DIR --out DIR [--intermediates]

A golden directory holds one .npy file per tensor plus manifest.json:

    {
      "format": "ferry-golden", "version": 1,
      "producer": "onnxruntime 1.17.0", "model": "model.onnx",
      "inputs": ["x"], "outputs": ["y"], "intermediates": ["/conv1/Conv_output_0", ...],
      "tensors": {"x": "x.npy", "y": "y.npy", "/conv1/Conv_output_0": "_conv1_Conv_output_0.npy"},
      "nodes": {"/conv1/Conv": ["/conv1/Conv_output_0"], ...},
      "skipped": [{"name": "seq", "reason": "not a tensor (sequence)"}]
    }

`tensors` maps each source tensor name to its file (inputs included). `nodes`
maps each source node name (the ONNX node name, or "<OpType>_<index>" when it
has none, the same rule as ferry's importer) to its output tensor names: the
C++ side follows node provenance through it when a tensor was renamed by a
rewrite. `skipped` lists intermediates the framework could not expose.

Inputs (--inputs): an .npz file (np.savez / np.savez_compressed), or a
directory of .npy files: with a manifest.json as above (its `tensors` entries
that name model inputs are used), else each NAME.npy feeds input NAME.

With --intermediates every intermediate tensor of the ONNX graph (every output
of a top-level node that is not a graph output and not a Constant) is added as
an extra graph output, typed by onnx.shape_inference, and dumped too. Tensors
whose type inference cannot tell, or that are not tensors (sequences, maps,
optionals), are skipped and listed. Graph optimizations are disabled so
onnxruntime computes the graph exactly as written and every tensor exists.

Exit status: 0 ok; 2 bad command line; 3 a required package is missing;
4 the model or the inputs could not be read or run.

    python -m ferry.reference tensorflow MODEL.pb|SAVED_MODEL_DIR --inputs ... --out DIR [--intermediates]

TensorFlow: a SavedModel directory runs its serving_default signature
(inputs and outputs named by the signature's keys); with --intermediates the
signature's function is frozen (convert_variables_to_constants_v2, which
inlines nested calls) and every node output is dumped under the name ferry
gives the inlined node: "<top-level call node>/<node>" (see
saved_model_call_prefix). A frozen GraphDef
runs in a session, inputs are its Placeholders, outputs the nodes nothing
reads (ferry's rule), and with --intermediates every node output is dumped
under its tensor name ("node" for output 0, "node:1", ...), which is how
ferry's TensorFlow importer names the values, so layers match by name.

    python -m ferry.reference torch MODEL.pt2 --inputs ... --out DIR [--intermediates]

PyTorch: torch.export.load(MODEL.pt2) (torch reads its own archive), run as
ep.module() on the inputs named as the program's user inputs; outputs are named
as ferry names them ("output", or "output_0", "output_1", ...). With
--intermediates every call_function node's tensor output is dumped under the
node's name (multi-output nodes: their getitem nodes' names), which is how
ferry's PyTorch importer names the values; outputs are copied when recorded,
so a later in-place op does not change an earlier layer's value.

More frameworks are one more entry in FRAMEWORKS.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

EXIT_USAGE = 2
EXIT_MISSING_PACKAGE = 3
EXIT_MODEL_ERROR = 4

GOLDEN_FORMAT = "ferry-golden"
GOLDEN_VERSION = 1


class BridgeError(Exception):
    """An error with an exit status; main() prints it on one line."""

    def __init__(self, message, status=EXIT_MODEL_ERROR):
        super().__init__(message)
        self.status = status


def require(module, pip_name=None):
    """Imports `module`, or fails with the interpreter and the pip command to fix it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise BridgeError(
            f"the Python package '{pip_name or module}' is not importable in {sys.executable} ({e}); "
            f"install it with: {sys.executable} -m pip install {pip_name or module}  "
            "(or point FERRY_PYTHON at an interpreter that has it)",
            EXIT_MISSING_PACKAGE,
        ) from None


# --- golden directories ------------------------------------------------------------


def safe_stem(name):
    """A file stem for a tensor name: characters outside [A-Za-z0-9._-] become '_'."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:200]
    return stem if stem not in ("", ".", "..") else "_"


class GoldenWriter:
    """Writes tensors as .npy files into a directory and keeps the manifest."""

    def __init__(self, out_dir, producer, model):
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.manifest = {
            "format": GOLDEN_FORMAT,
            "version": GOLDEN_VERSION,
            "producer": producer,
            "model": str(model),
            "inputs": [],
            "outputs": [],
            "intermediates": [],
            "tensors": {},
            "nodes": {},
            "skipped": [],
        }
        self._used = set()

    def add(self, name, array, kind):
        np = require("numpy")
        if name in self.manifest["tensors"]:
            return
        array = np.asarray(array)
        if array.dtype == object or array.dtype.kind in "USV":
            self.skip(name, f"dtype {array.dtype} has no numeric .npy form")
            return
        stem = safe_stem(name)
        file = stem + ".npy"
        k = 1
        while file.lower() in self._used:  # also distinct on case-insensitive file systems
            file = f"{stem}_{k}.npy"
            k += 1
        self._used.add(file.lower())
        # C order for the C++ reader; np.ascontiguousarray would turn a 0-d array into shape (1,).
        np.save(self.dir / file, np.asarray(array, order="C"), allow_pickle=False)
        self.manifest["tensors"][name] = file
        self.manifest[kind].append(name)

    def skip(self, name, reason):
        self.manifest["skipped"].append({"name": name, "reason": reason})

    def close(self):
        text = json.dumps(self.manifest, indent=1, ensure_ascii=False)
        (self.dir / "manifest.json").write_text(text + "\n", encoding="utf-8")


def read_inputs(path):
    """{name: ndarray} from an .npz file or a directory (see the module docstring)."""
    np = require("numpy")
    path = Path(path)
    if path.is_dir():
        manifest = path / "manifest.json"
        if manifest.exists():
            try:
                m = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise BridgeError(f"{manifest}: not valid JSON: {e}") from None
            tensors = m.get("tensors", m) if isinstance(m, dict) else None
            if not isinstance(tensors, dict):
                raise BridgeError(f"{manifest}: expected an object mapping tensor names to .npy files")
            files = {name: path / f for name, f in tensors.items() if isinstance(f, str)}
        else:
            files = {p.stem: p for p in sorted(path.glob("*.npy"))}
        out = {}
        root = path.resolve()
        for name, f in files.items():
            if not Path(f).resolve().is_relative_to(root):
                raise BridgeError(f"{manifest}: the file for '{name}' lies outside {path}")
            out[name] = (f, None)
        return _LazyArrays(out)
    if not path.exists():
        raise BridgeError(f"{path}: no such file or directory")
    try:
        with np.load(path, allow_pickle=False) as z:
            return {name: z[name] for name in z.files}
    except Exception as e:  # numpy raises many kinds for a bad archive
        raise BridgeError(f"{path}: cannot read as .npz: {e}") from None


class _LazyArrays(dict):
    """Loads each .npy on first access, so unused entries (outputs in a golden dir) cost nothing."""

    def __getitem__(self, name):
        np = require("numpy")
        f, arr = dict.__getitem__(self, name)
        if arr is None:
            try:
                arr = np.load(f, allow_pickle=False)
            except Exception as e:
                raise BridgeError(f"{f}: cannot read input '{name}': {e}") from None
            dict.__setitem__(self, name, (f, arr))
        return arr


# --- ONNX Runtime ------------------------------------------------------------------


def onnx_node_names(graph):
    """Source node names as ferry's importer assigns them (empty -> '<OpType>_<index>')."""
    return [n.name or f"{n.op_type}_{i}" for i, n in enumerate(graph.node)]


def expose_intermediates(model, writer):
    """Adds every top-level intermediate tensor as a graph output; returns their names."""
    onnx = require("onnx")
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception as e:  # a model ORT runs may still trip the checker; use what we have
        print(f"ferry.reference: warning: shape inference failed ({e}); using the model's value_info",
              file=sys.stderr)
        inferred = model
    g = inferred.graph
    types = {vi.name: vi.type for vi in list(g.value_info) + list(g.input) + list(g.output)}
    existing = {o.name for o in model.graph.output}
    not_intermediate = existing | {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer}
    added, seen = [], set()
    for node in model.graph.node:
        for out in node.output:
            if not out or out in not_intermediate or out in seen:
                continue
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                continue  # not a computation; ferry folds it into a constant
            t = types.get(out)
            if t is None or not t.HasField("tensor_type"):
                kind = "unknown type" if t is None else f"not a tensor ({t.WhichOneof('value')})"
                writer.skip(out, f"{kind} after shape inference; onnxruntime cannot expose it as an output")
                continue
            if t.tensor_type.elem_type == 0:
                writer.skip(out, "element type unknown after shape inference")
                continue
            vi = onnx.helper.make_tensor_value_info(out, t.tensor_type.elem_type, None)  # no shape: never conflicts
            model.graph.output.append(vi)
            added.append(out)
            seen.add(out)
    return added


def run_onnxruntime(model_path, inputs, writer, intermediates):
    ort = require("onnxruntime")
    onnx = require("onnx")
    writer.manifest["producer"] = f"onnxruntime {ort.__version__}"
    try:
        model = onnx.load(str(model_path))
    except Exception as e:
        raise BridgeError(f"{model_path}: cannot load as ONNX: {e}") from None
    ferry_ops = sorted({n.op_type for n in model.graph.node if n.domain == "ferry"})
    if ferry_ops:
        # A model `ferry convert` wrote: onnxruntime has none of ferry's fused ops (docs/ferry_ops.md).
        raise BridgeError(f"{model_path}: has ferry's own ops ({', '.join(ferry_ops)}: a model `ferry convert` "
                          "wrote), which onnxruntime cannot run: validate the source model instead, with the "
                          "converted model's --precision")
    names = onnx_node_names(model.graph)
    for name, node in zip(names, model.graph.node):
        # Source names need not be unique; ferry's provenance holds them as they are.
        writer.manifest["nodes"].setdefault(name, []).extend(o for o in node.output if o)

    graph_outputs = [o.name for o in model.graph.output]
    added = expose_intermediates(model, writer) if intermediates else []
    opts = ort.SessionOptions()
    # No graph rewrites: the oracle computes the model exactly as written, and
    # every intermediate tensor survives to be dumped.
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    sess = None
    if added:
        try:
            sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        except Exception as e:
            # Some graph onnxruntime runs may still refuse extra outputs (or be
            # too large to serialize): fall back to the outputs alone.
            print(f"ferry.reference: warning: onnxruntime refused the intermediate outputs ({e}); "
                  "comparing outputs only", file=sys.stderr)
            for name in added:
                writer.skip(name, f"onnxruntime refused the model with intermediates exposed: {e}")
            added = []
    if sess is None:
        try:
            sess = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
        except Exception as e:
            raise BridgeError(f"{model_path}: onnxruntime cannot load the model: {e}") from None

    feeds = {}
    for i in sess.get_inputs():
        if i.name not in inputs:
            raise BridgeError(f"no value given for model input '{i.name}' (given: {sorted(inputs.keys())})")
        feeds[i.name] = inputs[i.name]
    out_names = [o.name for o in sess.get_outputs()]
    try:
        results = sess.run(out_names, feeds)
    except Exception as e:
        raise BridgeError(f"{model_path}: onnxruntime failed to run the model: {e}") from None

    for name, arr in feeds.items():
        writer.add(name, arr, "inputs")
    by_name = dict(zip(out_names, results))
    for name in graph_outputs:
        writer.add(name, by_name[name], "outputs")
    for name in added:
        writer.add(name, by_name[name], "intermediates")


# --- TensorFlow ---------------------------------------------------------------------

# Ops whose outputs are not computed tensors (or not worth dumping) in a frozen graph.
_TF_NOT_LAYERS = {"Const", "Placeholder", "NoOp", "Identity", "VarHandleOp", "ReadVariableOp"}
_TF_NO_OUTPUTS = {"NoOp", "Assert", "AssignVariableOp", "SaveV2", "Print", "PrintV2"}


def tf_tensor_name(tensor_name):
    """TensorFlow "node:0" -> "node" (ferry names output 0 by the node), "node:1" stays."""
    return tensor_name[:-2] if tensor_name.endswith(":0") else tensor_name


def frozen_graph_signature(graph_def):
    """(placeholders, outputs) the way ferry's importer picks them for a frozen GraphDef."""
    read = set()
    for n in graph_def.node:
        for i in n.input:
            if i and not i.startswith("^"):
                read.add(i.split(":")[0])
    inputs = [n.name for n in graph_def.node if n.op == "Placeholder"]
    outputs = [n.name for n in graph_def.node
               if n.name not in read and n.op not in _TF_NO_OUTPUTS and n.op not in ("Const", "VarHandleOp", "Placeholder")]
    return inputs, outputs


def saved_model_call_prefix(path, signature):
    """The name prefix ferry gives the nodes of a signature's function: "<call node>/".

    ferry imports a SavedModel from its meta graph (the one tagged "serve", else
    the only one): the signature's output tensors name a (Stateful)PartitionedCall
    node of the top-level graph, and ferry names every node it inlines from the
    called function "<call node>/<node>" (nested calls add their own call node's
    name), recording that name as the IR node's provenance. TensorFlow's loaded
    signature is that called function, and freezing it (grappler's inliner) names
    nested nodes by the same rule, so prefixing its names with the top-level call
    node's reproduces ferry's names. None when the signature is not one such call.
    """
    from tensorflow.core.protobuf import saved_model_pb2

    sm = saved_model_pb2.SavedModel()
    try:
        sm.ParseFromString((Path(path) / "saved_model.pb").read_bytes())
    except Exception:
        return None
    metas = [m for m in sm.meta_graphs if "serve" in m.meta_info_def.tags] or list(sm.meta_graphs)[:1]
    if not metas or signature not in metas[0].signature_def:
        return None
    mg = metas[0]
    callers = {t.name.split(":")[0] for t in mg.signature_def[signature].outputs.values()}
    if len(callers) != 1:
        return None
    caller = next(iter(callers))
    node = next((n for n in mg.graph_def.node if n.name == caller), None)
    if node is None or node.op not in ("PartitionedCall", "StatefulPartitionedCall"):
        return None
    return caller + "/"


def run_graph_def(tf, np, model_path, graph_def, feeds, outputs, writer, intermediates, prefix=""):
    """Runs a GraphDef without functions in a session and writes the tensors.

    feeds: {golden input name: (tensor name, array)}; outputs: {golden output name:
    tensor name}. With `intermediates` every computed node output is dumped too,
    named prefix + "node" (output 0) or prefix + "node:k", and `nodes` maps
    prefix + node name to them (ferry's names; see saved_model_call_prefix)."""
    graph = tf.Graph()
    with graph.as_default():
        try:
            tf.compat.v1.import_graph_def(graph_def, name="")
        except Exception as e:
            raise BridgeError(f"{model_path}: tensorflow cannot import the graph: {e}") from None
    fetch = {n: graph.get_tensor_by_name(t) for n, t in outputs.items()}
    fetched = {t.name for t in fetch.values()}
    if intermediates:
        for op in graph.get_operations():
            writer.manifest["nodes"].setdefault(prefix + op.name, [prefix + tf_tensor_name(t.name) for t in op.outputs])
            if op.type in _TF_NOT_LAYERS:
                continue
            for t in op.outputs:
                if t.name in fetched:
                    continue
                if t.dtype.is_numpy_compatible and t.dtype != tf.string and t.dtype != tf.resource:
                    fetch.setdefault(prefix + tf_tensor_name(t.name), t)
    feed = {graph.get_tensor_by_name(t): arr for t, arr in feeds.values()}
    try:
        with tf.compat.v1.Session(graph=graph) as sess:
            keys = list(fetch)
            results = sess.run([fetch[k] for k in keys], feed)
    except Exception as e:
        raise BridgeError(f"{model_path}: tensorflow failed to run the model: {e}") from None
    by_name = dict(zip(keys, results))
    for n, (_, arr) in feeds.items():
        writer.add(n, arr, "inputs")
    for n in outputs:
        writer.add(n, by_name[n], "outputs")
    for k in keys:
        if k not in outputs:
            writer.add(k, np.asarray(by_name[k]), "intermediates")


def run_saved_model_frozen(tf, np, model_path, fn, names, inputs, writer, prefix):
    """A SavedModel signature with intermediates: the signature's function frozen into a
    GraphDef (variables become constants, calls are inlined) and run in a session."""
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    try:
        frozen = convert_variables_to_constants_v2(fn)
    except Exception as e:
        raise BridgeError(f"{model_path}: tensorflow cannot freeze the signature's function: {e}") from None
    # Inputs and outputs are flattened like tf.nest flattens a dict: by sorted key.
    out_keys = tf.nest.flatten({k: k for k in fn.structured_outputs})
    if len(frozen.inputs) != len(names) or len(frozen.outputs) != len(out_keys):
        raise BridgeError(f"{model_path}: the frozen signature has {len(frozen.inputs)} inputs and "
                          f"{len(frozen.outputs)} outputs; expected {len(names)} and {len(out_keys)}")
    feeds = {n: (t.name, inputs[n]) for n, t in zip(names, frozen.inputs)}
    outputs = {k: t.name for k, t in zip(out_keys, frozen.outputs)}
    run_graph_def(tf, np, model_path, frozen.graph.as_graph_def(), feeds, outputs, writer, True, prefix)


def run_tensorflow(model_path, inputs, writer, intermediates, signature="serving_default"):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    tf = require("tensorflow", "tensorflow-cpu")
    np = require("numpy")
    writer.manifest["producer"] = f"tensorflow {tf.__version__}"
    path = Path(model_path)
    if path.is_dir():
        # SavedModel: the signature's function, called as TensorFlow serving would.
        try:
            loaded = tf.saved_model.load(str(path))
        except Exception as e:
            raise BridgeError(f"{model_path}: tensorflow cannot load the SavedModel: {e}") from None
        if signature not in loaded.signatures:
            raise BridgeError(f"{model_path}: no signature '{signature}' (signatures: {sorted(loaded.signatures)})")
        fn = loaded.signatures[signature]
        names = sorted(fn.structured_input_signature[1])
        missing = [n for n in names if n not in inputs]
        if missing:
            raise BridgeError(f"no value given for model input(s) {missing} (given: {sorted(inputs.keys())})")
        if intermediates:
            prefix = saved_model_call_prefix(path, signature)
            if prefix is not None:
                return run_saved_model_frozen(tf, np, model_path, fn, names, inputs, writer, prefix)
            print(f"ferry.reference: warning: signature '{signature}' is not one function call in the meta graph; "
                  "its intermediate tensors are not exposed, comparing outputs only", file=sys.stderr)
        feeds = {n: tf.constant(inputs[n]) for n in names}
        try:
            outs = fn(**feeds)
        except Exception as e:
            raise BridgeError(f"{model_path}: tensorflow failed to run the model: {e}") from None
        for n in names:
            writer.add(n, inputs[n], "inputs")
        for k in sorted(outs):
            writer.add(k, outs[k].numpy(), "outputs")
        return
    # Frozen GraphDef: imported into a graph and run in a session, every node output fetchable.
    graph_def = tf.compat.v1.GraphDef()
    try:
        graph_def.ParseFromString(path.read_bytes())
    except Exception as e:
        raise BridgeError(f"{model_path}: not a TensorFlow GraphDef: {e}") from None
    in_names, out_names = frozen_graph_signature(graph_def)
    missing = [n for n in in_names if n not in inputs]
    if missing:
        raise BridgeError(f"no value given for model input(s) {missing} (given: {sorted(inputs.keys())})")
    feeds = {n: (n + ":0", inputs[n]) for n in in_names}
    run_graph_def(tf, np, model_path, graph_def, feeds, {n: n + ":0" for n in out_names}, writer, intermediates)


# --- PyTorch -----------------------------------------------------------------------


def run_torch(model_path, inputs, writer, intermediates):
    torch = require("torch")
    np = require("numpy")
    import operator

    writer.manifest["producer"] = f"torch {torch.__version__}"
    try:
        ep = torch.export.load(str(model_path))
    except Exception as e:
        raise BridgeError(f"{model_path}: torch cannot load the program: {e}") from None
    names = list(ep.graph_signature.user_inputs)
    missing = [n for n in names if n not in inputs]
    if missing:
        raise BridgeError(f"{model_path}: no value for input(s) {missing}")
    args = [torch.from_numpy(np.ascontiguousarray(inputs[n])) for n in names]
    for n, a in zip(names, args):
        writer.add(n, a.numpy(), "inputs")
    module = ep.module()
    recorded = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            value = super().run_node(node)
            if node.op == "call_function" and isinstance(value, torch.Tensor):
                recorded[node.name] = value.detach().clone()
                parent = node.args[0] if node.target is operator.getitem else node
                writer.manifest["nodes"].setdefault(parent.name, []).append(node.name)
            return value

    try:
        with torch.no_grad():
            out = Recorder(module).run(*args) if intermediates else module(*args)
    except Exception as e:
        raise BridgeError(f"{model_path}: torch failed to run the program: {e}") from None
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    out_names = ["output"] if len(outs) == 1 else [f"output_{i}" for i in range(len(outs))]
    for name, t in zip(out_names, outs):
        writer.add(name, t.detach().numpy(), "outputs")
    for name, t in recorded.items():
        writer.add(name, t.numpy(), "intermediates")


# --- op libraries ---------------------------------------------------------------------

def run_op_library(model_path, inputs, writer, intermediates, library=None):
    """A one-node ONNX model of a custom op, computed by the reference function that the
    Python op library LIBRARY registered for it (ferry.op_library; `--check-repairs`)."""
    onnx = require("onnx")
    np = require("numpy")
    from onnx import helper, numpy_helper

    from . import op_library

    if not library:
        raise BridgeError("the oplib reference needs --library FILE.py", EXIT_USAGE)
    try:
        op_library.run_library_file(library)
    except Exception as e:  # the user's own file
        raise BridgeError(f"{library}: {type(e).__name__}: {e}") from None
    model = onnx.load(str(model_path))
    if len(model.graph.node) != 1:
        raise BridgeError(f"{model_path}: the oplib reference runs one-node models")
    node = model.graph.node[0]
    fn = op_library.reference_for(node.domain, node.op_type)
    if fn is None:
        raise BridgeError(f"{library} registers no reference for {node.domain}.{node.op_type}")
    writer.manifest["producer"] = f"op library {library}"
    args = []
    for name in node.input:
        if name not in inputs:
            init = [t for t in model.graph.initializer if t.name == name]
            if not init:
                raise BridgeError(f"no value given for input '{name}'")
            inputs_value = numpy_helper.to_array(init[0])
        else:
            inputs_value = inputs[name]
            writer.add(name, inputs_value, "inputs")
        args.append(inputs_value)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
    try:
        out = fn(*args, **attrs)
    except Exception as e:
        raise BridgeError(f"the reference of {node.domain}.{node.op_type} failed: {type(e).__name__}: {e}") from None
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for name, arr in zip([o for o in node.output], outs):
        if name:
            writer.add(name, np.asarray(arr), "outputs")
    writer.manifest["nodes"][node.name or f"{node.op_type}_0"] = [o for o in node.output if o]


# The reference frameworks: name -> function(model_path, inputs, writer, intermediates).
FRAMEWORKS = {
    "onnxruntime": run_onnxruntime,
    "oplib": run_op_library,
    "tensorflow": run_tensorflow,
    "torch": run_torch,
}


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m ferry.reference",
        description="Run a model in its source framework and write a golden directory for `ferry validate`.",
    )
    p.add_argument("framework", choices=sorted(FRAMEWORKS), help="the reference framework")
    p.add_argument("model", help="the model file (tensorflow: also a SavedModel directory)")
    p.add_argument("--inputs", required=True, help="input values: an .npz file, or a directory of .npy files")
    p.add_argument("--out", required=True, help="the golden directory to write (created)")
    p.add_argument("--intermediates", action="store_true", help="also dump every intermediate tensor")
    p.add_argument("--library", help="oplib: the Python op library file that registers the op's reference")
    args = p.parse_args(argv)  # exits 2 on a bad command line

    try:
        model = Path(args.model)
        if not (model.is_file() or (args.framework == "tensorflow" and model.is_dir())):
            raise BridgeError(f"{model}: no such file")
        inputs = read_inputs(args.inputs)
        writer = GoldenWriter(args.out, args.framework, model)
        if args.framework == "oplib":
            run_op_library(model, inputs, writer, args.intermediates, args.library)
        else:
            FRAMEWORKS[args.framework](model, inputs, writer, args.intermediates)
        writer.close()
    except BridgeError as e:
        print(f"ferry.reference: error: {e}", file=sys.stderr)
        return e.status
    except OSError as e:
        print(f"ferry.reference: error: {e}", file=sys.stderr)
        return EXIT_MODEL_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
