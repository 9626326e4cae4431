"""Malformed TensorFlow models for the bad-inputs corpus (gen_bad_inputs.py imports them).

Written without TensorFlow: the messages come from ferry's own schema
(src/frontends/tensorflow/proto/*.proto, loaded through `protoc
--descriptor_set_out`, so no generated Python code has to match the installed
protobuf runtime), and the checkpoint index is written by the small SSTable
writer below (leveldb table format: prefix-compressed blocks, masked crc32c
trailers, a 48-byte footer). Every SavedModel case starts from the same valid
model, `_saved_model()`: y = x + w with x a [1, 4] f32 signature input and w a
checkpoint variable [1, 2, 3, 4]; tf_saved_model_valid shows it runs.
"""

from __future__ import annotations

import functools
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from cases.registry import DUPLICATE, ESCAPE, OUT_OF_RANGE, PARSE, TOO_LARGE, UNDEFINED, UNSUPPORTED, both, case, expect

REPO = Path(__file__).resolve().parents[2]
PROTO_DIR = REPO / "src"
PROTOS = ["frontends/tensorflow/proto/tf_graph.proto", "frontends/tensorflow/proto/tf_saved_model.proto",
          "frontends/tensorflow/proto/tf_tensor_bundle.proto"]

DT_FLOAT, DT_INT32, DT_STRING = 1, 3, 7
CHECKSUM = ["checksum", "corrupt"]
RECURSION = ["calls itself", "recursive", "recursion"]
CYCLE = ["cycle"]


@functools.lru_cache(maxsize=None)
def pb():
    """Message classes of ferry's TensorFlow schema, by message name (e.g. pb().GraphDef)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    protoc = shutil.which("protoc")
    if not protoc:
        raise RuntimeError("tf_cases: protoc (Debian protobuf-compiler, installed by scripts/setup.sh) is needed")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tf.desc"
        subprocess.run([protoc, f"-I{PROTO_DIR}", "--include_imports", f"--descriptor_set_out={out}", *PROTOS],
                       check=True, cwd=PROTO_DIR)
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)

    class Messages:
        def __getattr__(self, name):
            return message_factory.GetMessageClass(pool.FindMessageTypeByName("ferry.tfproto." + name))

    return Messages()


# --- crc32c and the SSTable (checkpoint index) writer ----------------------------------


@functools.lru_cache(maxsize=None)
def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


def crc32c(data, crc=0):
    t = _crc_table()
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _block(entries, restarts=None):
    """A table block: (key, value) entries, no prefix sharing, one restart point."""
    data = b"".join(_varint(0) + _varint(len(k)) + _varint(len(v)) + k + v for k, v in entries)
    restarts = [0] if restarts is None else restarts
    return data + b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))


def sstable(entries, block_type=0):
    """A leveldb-format table of sorted (bytes key, bytes value) entries, in one data block."""
    out = bytearray()

    def put_block(block):
        offset = len(out)
        trailer = bytes([block_type])
        out.extend(block + trailer + struct.pack("<I", masked_crc(block + trailer)))
        return _varint(offset) + _varint(len(block))

    data_handle = put_block(_block(entries))
    meta_handle = put_block(_block([]))
    index_handle = put_block(_block([(entries[-1][0] + b"\xff", data_handle)]))
    footer = (meta_handle + index_handle).ljust(40, b"\0") + struct.pack("<Q", 0xDB4775248B80FB57)
    return bytes(out + footer)


# --- models ------------------------------------------------------------------------------


def node(name, op, inputs=(), **attrs):
    """A NodeDef; attrs: dtype=/T= ints are types, shape= a dims list, value= a TensorProto, f= a function name."""
    n = pb().NodeDef(name=name, op=op, input=list(inputs))
    for k, v in attrs.items():
        a = n.attr[k]
        if k in ("dtype", "T"):
            a.type = v
        elif k == "shape":
            a.shape.CopyFrom(shape_proto(v))
        elif k == "value":
            a.tensor.CopyFrom(v)
        elif k == "f":
            a.func.name = v
        elif isinstance(v, str):
            a.s = v.encode()
        else:
            raise TypeError(k)
    return n


def shape_proto(dims):
    s = pb().TensorShapeProto()
    for d in dims:
        s.dim.add(size=d)
    return s


def const(name, array=None, dtype=DT_FLOAT, dims=None, **fields):
    """A Const node holding `array` (f32 tensor_content), or a TensorProto built from dims + fields."""
    t = pb().TensorProto(dtype=dtype, **fields)
    if array is not None:
        array = np.asarray(array, np.float32)
        t.tensor_content = array.tobytes()
        dims = array.shape
    t.tensor_shape.CopyFrom(shape_proto(dims or []))
    return node(name, "Const", dtype=dtype, value=t)


def placeholder(name="x", dims=(1, 4), dtype=DT_FLOAT):
    return node(name, "Placeholder", dtype=dtype, shape=list(dims))


def graph_def(nodes, functions=()):
    g = pb().GraphDef(node=nodes)
    g.versions.producer = 1
    for f in functions:
        g.library.function.append(f)
    return g


def function(name, nodes, ret, inputs=("x",), outputs=("y",)):
    """A FunctionDef: f32 input/output args, body nodes, ret {output arg: tensor}."""
    f = pb().FunctionDef(node_def=nodes)
    f.signature.name = name
    for a in inputs:
        f.signature.input_arg.add(name=a, type=DT_FLOAT)
    for a in outputs:
        f.signature.output_arg.add(name=a, type=DT_FLOAT)
    for k, v in ret.items():
        f.ret[k] = v
    return f


def call(name, fname, inputs=("x",)):
    return node(name, "StatefulPartitionedCall", inputs, f=fname)


def save_pb(ctx, graph, filename="model.pb"):
    data = graph if isinstance(graph, bytes) else graph.SerializeToString(deterministic=True)
    return ctx.save(data, filename)


def pb_case(ctx, graph, fragments, mentions=(), run_exit=(2,)):
    e = expect(exit=run_exit, fragments=fragments, mentions=mentions)
    return {"model": save_pb(ctx, graph), "run": e, "inspect": e}


W = np.array([1, 2, 3, 4], np.float32)


def bundle_entry(array=W, dtype=DT_FLOAT, **over):
    data = np.asarray(array).tobytes()
    e = pb().BundleEntryProto(dtype=dtype, shard_id=0, offset=0, size=len(data), crc32c=masked_crc(data))
    e.shape.CopyFrom(shape_proto(np.asarray(array).shape))
    for k, v in over.items():
        if k == "shape":
            e.shape.CopyFrom(shape_proto(v))
        else:
            setattr(e, k, v)
    return e


def bundle_header(num_shards=1):
    h = pb().BundleHeaderProto(num_shards=num_shards, endianness=0)
    h.version.producer = 1
    return h


def index_bytes(entries=None, header=None):
    """The checkpoint index: header under "", then {key: BundleEntryProto}."""
    entries = {"w": bundle_entry()} if entries is None else entries
    items = [(b"", (header or bundle_header()).SerializeToString(deterministic=True))]
    items += sorted((k.encode(), v.SerializeToString(deterministic=True)) for k, v in entries.items())
    return sstable(items)


def saved_model_proto(graph=None, inputs=None, outputs=None, tags=("serve",), signature="serving_default",
                      object_graph=None):
    """A SavedModel around `graph` (default: x + variable w) with one signature."""
    if graph is None:
        graph = graph_def([placeholder(), node("w", "VarHandleOp", dtype=DT_FLOAT, shape=[4], shared_name="w"),
                           node("w_read", "ReadVariableOp", ["w"], dtype=DT_FLOAT),
                           node("y", "AddV2", ["x", "w_read"], T=DT_FLOAT)])
    sm = pb().SavedModel(saved_model_schema_version=1)
    mg = sm.meta_graphs.add()
    mg.meta_info_def.tags.extend(tags)
    mg.graph_def.CopyFrom(graph)
    sig = mg.signature_def[signature]
    for key, (tensor, dims) in (inputs or {"x": ("x:0", [1, 4])}).items():
        sig.inputs[key].name = tensor
        sig.inputs[key].dtype = DT_FLOAT
        sig.inputs[key].tensor_shape.CopyFrom(shape_proto(dims))
    for key, tensor in (outputs or {"y": "y:0"}).items():
        sig.outputs[key].name = tensor
        sig.outputs[key].dtype = DT_FLOAT
    if object_graph is not None:
        mg.object_graph_def.CopyFrom(object_graph)
    return sm


def write_saved_model(d, sm=None, index=None, data=None, variables=True):
    """Writes a SavedModel directory `d`; index/data are bytes (default: the valid checkpoint)."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "saved_model.pb").write_bytes((sm or saved_model_proto()).SerializeToString(deterministic=True))
    if variables:
        v = d / "variables"
        v.mkdir(exist_ok=True)
        if index is not False:
            (v / "variables.index").write_bytes(index_bytes() if index is None else index)
        if data is not False:
            (v / "variables.data-00000-of-00001").write_bytes(W.tobytes() if data is None else data)


def sm_case(ctx, fragments, mentions=(), file=None, run_exit=(2,), **kw):
    """Writes ctx.dir/model (a SavedModel) from write_saved_model(**kw); the error must name `file`."""
    d = ctx.dir / "model"
    write_saved_model(d, **kw)
    e = expect(exit=run_exit, fragments=fragments, mentions=mentions)
    return {"model": ctx.rel(d), "model_not_a_file": True, "file": ctx.rel(d / file) if file else ctx.rel(d),
            "inputs": {"x": ctx.npy(np.ones((1, 4), np.float32), "x.npy")}, "run": e, "inspect": e}


INDEX = "variables/variables.index"
DATA = "variables/variables.data-00000-of-00001"


# --- frozen GraphDef cases -----------------------------------------------------------------


@case
def tf_graphdef_valid(ctx):
    """A valid frozen GraphDef, Relu(x + 0) of x >= 0: the corpus's TF builder makes models ferry runs."""
    g = graph_def([placeholder(), const("w", [0, 0, 0, 0]), node("add", "AddV2", ["x", "w"], T=DT_FLOAT),
                   node("y", "Relu", ["add"], T=DT_FLOAT)])
    return {"model": save_pb(ctx, g), "inputs": {"x": ctx.npy(np.arange(4, dtype=np.float32).reshape(1, 4), "x.npy")},
            "output_equals_input": True, "run": expect(exit=[0]), "inspect": expect(exit=[0])}


@case
def tf_graphdef_truncated(ctx):
    """A frozen GraphDef cut inside its weight bytes."""
    g = graph_def([placeholder(), const("w", np.ones(256)), node("y", "AddV2", ["x", "w"], T=DT_FLOAT)])
    whole = g.SerializeToString(deterministic=True)
    return pb_case(ctx, whole[: len(whole) // 2], PARSE + ["truncated"])


@case
def tf_graphdef_random_bytes(ctx):
    """4 KiB of seeded random bytes named model.pb."""
    data = np.random.default_rng(6).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    return pb_case(ctx, data, PARSE + ["no nodes"])


@case
def tf_graphdef_nested_attr_bomb(ctx):
    """An AttrValue nesting NameAttrList -> AttrValue 100,000 deep (protobuf recursion)."""
    inner = b""
    for _ in range(100_000):
        # AttrValue.func (10) = NameAttrList{attr (2) = map entry{key (1) "a", value (2) = AttrValue}}
        entry = b"\x0a\x01a" + b"\x12" + _varint(len(inner)) + inner
        nal = b"\x12" + _varint(len(entry)) + entry
        inner = b"\x52" + _varint(len(nal)) + nal
    nd = b"\x0a\x01y\x12\x04Relu" + b"\x2a" + _varint(len(inner) + 5) + b"\x0a\x01T\x12" + _varint(len(inner)) + inner
    return pb_case(ctx, b"\x0a" + _varint(len(nd)) + nd, PARSE + ["deep", "nest"])


@case
def tf_graphdef_cycle(ctx):
    """a = AddV2(x, b), b = Relu(a): a cycle feeding the output."""
    g = graph_def([placeholder(), node("a", "AddV2", ["x", "b"], T=DT_FLOAT), node("b", "Relu", ["a"], T=DT_FLOAT),
                   node("y", "Relu", ["a"], T=DT_FLOAT)])
    return pb_case(ctx, g, CYCLE, mentions=[["'a'", "'b'"]])


@case
def tf_graphdef_self_loop(ctx):
    """A node reading its own output."""
    g = graph_def([placeholder(), node("a", "AddV2", ["x", "a"], T=DT_FLOAT), node("y", "Relu", ["a"], T=DT_FLOAT)])
    return pb_case(ctx, g, CYCLE, mentions=["'a'"])


@case
def tf_graphdef_duplicate_node_name(ctx):
    """Two nodes named 'relu'."""
    g = graph_def([placeholder(), node("relu", "Relu", ["x"], T=DT_FLOAT), node("relu", "Relu", ["x"], T=DT_FLOAT),
                   node("y", "Neg", ["relu"], T=DT_FLOAT)])
    return pb_case(ctx, g, DUPLICATE + ["used twice"], mentions=["relu"])


@case
def tf_graphdef_missing_node_name(ctx):
    """A node without a name."""
    g = graph_def([placeholder(), node("", "Relu", ["x"], T=DT_FLOAT), node("y", "Relu", ["x"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["no name", "name"])


@case
def tf_graphdef_input_missing_node(ctx):
    """Relu reads 'ghost:0', which no node produces."""
    g = graph_def([placeholder(), node("y", "Relu", ["ghost:0"], T=DT_FLOAT)])
    return pb_case(ctx, g, UNDEFINED + ["not produced"], mentions=["ghost", "'y'"])


@case
def tf_graphdef_input_bad_port(ctx):
    """Relu reads 'x:3'; the placeholder has one output."""
    g = graph_def([placeholder(), node("y", "Relu", ["x:3"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["output 3", "has 1 output"] + OUT_OF_RANGE, mentions=["x:3"])


@case
def tf_graphdef_input_huge_port(ctx):
    """Relu reads 'x:99999999999999999999' (a port that does not fit an integer)."""
    g = graph_def([placeholder(), node("y", "Relu", ["x:99999999999999999999"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["malformed", "reference"] + OUT_OF_RANGE, mentions=["x:99999999999999999999"])


@case
def tf_graphdef_malformed_input_ref(ctx):
    """An input reference 'x::' with empty parts."""
    g = graph_def([placeholder(), node("y", "Relu", ["x::"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["malformed"], mentions=["x::"])


@case
def tf_graphdef_unknown_ops(ctx):
    """Three ops ferry does not know, in a chain: all three are named in one error."""
    g = graph_def([placeholder(), node("frob", "FrobnicateV7", ["x"]), node("zorb", "Zorblax", ["frob"]),
                   node("y", "QuuxPool", ["zorb"])])
    e = expect(fragments=UNSUPPORTED + ["no importer"], mentions=["FrobnicateV7", "Zorblax", "QuuxPool"])
    return {"model": save_pb(ctx, g), "run": e, "inspect": expect(exit=[0, 2], mentions=["FrobnicateV7", "Zorblax",
                                                                                          "QuuxPool"])}


@case
def tf_graphdef_huge_tensor_shape(ctx):
    """A Const whose tensor_shape is [2^31, 2^31, 2^31] and holds one float."""
    g = graph_def([placeholder(), const("w", dims=[2**31] * 3, float_val=[1.0]),
                   node("y", "AddV2", ["x", "w"], T=DT_FLOAT)])
    return pb_case(ctx, g, TOO_LARGE + ["invalid"], mentions=["'w'"])


@case
def tf_graphdef_absurd_dim(ctx):
    """A Const dimension of 2^62."""
    g = graph_def([placeholder(), const("w", dims=[2**62], float_val=[1.0]), node("y", "AddV2", ["x", "w"], T=DT_FLOAT)])
    return pb_case(ctx, g, TOO_LARGE + ["invalid"], mentions=["'w'"])


@case
def tf_graphdef_negative_dim(ctx):
    """A Const dimension of -5."""
    g = graph_def([placeholder(), const("w", dims=[-5], float_val=[1.0]), node("y", "AddV2", ["x", "w"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["invalid", "negative"], mentions=["'w'"])


@case
def tf_graphdef_placeholder_huge_shape(ctx):
    """A Placeholder whose shape attribute is [2^62]."""
    g = graph_def([placeholder(dims=[2**62]), node("y", "Relu", ["x"], T=DT_FLOAT)])
    return pb_case(ctx, g, TOO_LARGE, mentions=["'x'"])


@case
def tf_graphdef_tensor_content_size(ctx):
    """A [4] f32 Const whose tensor_content has 6 bytes."""
    t = pb().TensorProto(dtype=DT_FLOAT, tensor_content=b"\0" * 6)
    t.tensor_shape.CopyFrom(shape_proto([4]))
    g = graph_def([placeholder(), node("w", "Const", dtype=DT_FLOAT, value=t), node("y", "AddV2", ["x", "w"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["bytes", "needs"], mentions=["'w'"])


@case
def tf_graphdef_const_dtype_contradiction(ctx):
    """A Const whose dtype attribute (DT_INT32) contradicts its value (DT_FLOAT)."""
    c = const("w", [1, 2, 3, 4])
    c.attr["dtype"].type = DT_INT32
    g = graph_def([placeholder(), c, node("y", "AddV2", ["x", "w"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["contradicts", "dtype"], mentions=["'w'", "DT_INT32"])


@case
def tf_graphdef_wrong_t_attr(ctx):
    """AddV2 with T = DT_INT32 on f32 inputs."""
    g = graph_def([placeholder(), const("w", [1, 2, 3, 4]), node("y", "AddV2", ["x", "w"], T=DT_INT32)])
    return pb_case(ctx, g, ["attribute T"], mentions=["'y'", "DT_INT32"])


@case
def tf_graphdef_unknown_dtype(ctx):
    """A Placeholder of dtype enum 77."""
    g = graph_def([placeholder(dtype=77), node("y", "Relu", ["x"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["dtype"], mentions=["77", "'x'"])


@case
def tf_graphdef_string_const(ctx):
    """A DT_STRING Const feeding an AddV2."""
    t = pb().TensorProto(dtype=DT_STRING, string_val=[b"hello"])
    g = graph_def([placeholder(), node("w", "Const", dtype=DT_STRING, value=t), node("y", "AddV2", ["x", "w"], T=DT_FLOAT)])
    return pb_case(ctx, g, UNSUPPORTED + ["string"], mentions=["'w'"])


@case
def tf_graphdef_shape_contradiction(ctx):
    """AddV2 of x [1, 4] and a [3] constant: shapes that do not broadcast."""
    g = graph_def([placeholder(), const("w", [1, 2, 3]), node("y", "AddV2", ["x", "w"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["broadcast", "shape", "incompatible"], mentions=["'y'"])


@case
def tf_graphdef_matmul_contradiction(ctx):
    """MatMul of x [1, 4] and a [5, 2] constant."""
    g = graph_def([placeholder(), const("w", np.ones((5, 2))), node("y", "MatMul", ["x", "w"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["shape", "dimension", "mismatch", "incompatible", "inner"], mentions=["'y'"])


@case
def tf_graphdef_reshape_contradiction(ctx):
    """Reshape of x [1, 4] (4 elements) to [3, 3]."""
    t = pb().TensorProto(dtype=DT_INT32, int_val=[3, 3])
    t.tensor_shape.CopyFrom(shape_proto([2]))
    g = graph_def([placeholder(), node("s", "Const", dtype=DT_INT32, value=t),
                   node("y", "Reshape", ["x", "s"], T=DT_FLOAT)])
    return pb_case(ctx, g, ["shape", "elements", "reshape", "cannot"], mentions=["'y'"])


@case
def tf_graphdef_chain_10k(ctx):
    """10,000 Neg nodes in a row (the walk from the output is iterative): runs and gives back the input."""
    nodes, prev = [placeholder()], "x"
    for i in range(10_000):
        nodes.append(node(f"neg{i}", "Neg", [prev], T=DT_FLOAT))
        prev = f"neg{i}"
    return {"model": save_pb(ctx, graph_def(nodes)), "output_equals_input": True,
            "inputs": {"x": ctx.npy(np.arange(4, dtype=np.float32).reshape(1, 4), "x.npy")},
            "run": expect(exit=[0]), "inspect": expect(exit=[0])}


# --- functions -------------------------------------------------------------------------------


def _call_graph(functions, fname="f"):
    return graph_def([placeholder(), call("y", fname)], functions)


@case
def tf_function_calls_itself(ctx):
    """Function f's body calls f."""
    f = function("f", [call("inner", "f")], {"y": "inner:output:0"})
    return pb_case(ctx, _call_graph([f]), RECURSION, mentions=["'f'"])


@case
def tf_function_calls_itself_by_op_name(ctx):
    """Function f's body has a node whose op is 'f' (a direct call by op name)."""
    f = function("f", [node("inner", "f", ["x"])], {"y": "inner:y:0"})
    return pb_case(ctx, _call_graph([f]), RECURSION, mentions=["'f'"])


@case
def tf_function_mutual_recursion(ctx):
    """f calls g, g calls f."""
    f = function("f", [call("cg", "g")], {"y": "cg:output:0"})
    g = function("g", [call("cf", "f")], {"y": "cf:output:0"})
    return pb_case(ctx, _call_graph([f, g]), RECURSION, mentions=["'f'", "g"])


@case
def tf_function_call_bomb(ctx):
    """f0 calls f1 twice, f1 calls f2 twice, ... f39: 2^40 inlined calls if expanded."""
    fs = []
    for i in range(40):
        nxt = f"f{i + 1}"
        body = [call("a", nxt), call("b", nxt), node("s", "AddV2", ["a:output:0", "b:output:0"], T=DT_FLOAT)]
        fs.append(function(f"f{i}", body, {"y": "s:z:0"}))
    fs.append(function("f40", [node("r", "Relu", ["x"], T=DT_FLOAT)], {"y": "r:activations:0"}))
    return pb_case(ctx, _call_graph(fs, "f0"), TOO_LARGE + ["inlin"])


@case
def tf_function_deep_calls(ctx):
    """f0 -> f1 -> ... -> f200: calls nested deeper than the importer allows."""
    fs = [function(f"f{i}", [call("c", f"f{i + 1}")], {"y": "c:output:0"}) for i in range(200)]
    fs.append(function("f200", [node("r", "Relu", ["x"], T=DT_FLOAT)], {"y": "r:activations:0"}))
    return pb_case(ctx, _call_graph(fs, "f0"), ["deeper", "depth", "nest"])


@case
def tf_function_missing(ctx):
    """A StatefulPartitionedCall of function 'nope', which the library does not have."""
    return pb_case(ctx, _call_graph([], "nope"), ["not in the graph's library", "library", "unknown function"],
                   mentions=["nope"])


@case
def tf_function_arity(ctx):
    """A call passes two inputs to a one-argument function."""
    f = function("f", [node("r", "Relu", ["x"], T=DT_FLOAT)], {"y": "r:activations:0"})
    g = graph_def([placeholder(), node("y", "StatefulPartitionedCall", ["x", "x"], f="f")], [f])
    return pb_case(ctx, g, ["inputs", "takes"], mentions=["'f'"])


@case
def tf_function_no_ret(ctx):
    """A function whose output arg has no ret entry."""
    f = function("f", [node("r", "Relu", ["x"], T=DT_FLOAT)], {})
    return pb_case(ctx, _call_graph([f]), ["ret"], mentions=["'f'"])


@case
def tf_function_ret_missing_node(ctx):
    """A function returning 'ghost:output:0'."""
    f = function("f", [node("r", "Relu", ["x"], T=DT_FLOAT)], {"y": "ghost:output:0"})
    return pb_case(ctx, _call_graph([f]), UNDEFINED + ["not produced"], mentions=["ghost", "'f'"])


@case
def tf_function_body_cycle(ctx):
    """A function body with a cycle a -> b -> a."""
    f = function("f", [node("a", "AddV2", ["x", "b:y:0"], T=DT_FLOAT), node("b", "Relu", ["a:z:0"], T=DT_FLOAT)],
                 {"y": "a:z:0"})
    return pb_case(ctx, _call_graph([f]), CYCLE, mentions=["'f'"])


@case
def tf_function_duplicate_node(ctx):
    """A function body with two nodes named 'r'."""
    f = function("f", [node("r", "Relu", ["x"], T=DT_FLOAT), node("r", "Neg", ["x"], T=DT_FLOAT)],
                 {"y": "r:activations:0"})
    return pb_case(ctx, _call_graph([f]), DUPLICATE + ["used twice"], mentions=["'r'", "'f'"])


@case
def tf_function_bad_output_arg(ctx):
    """A function returning 'b:no_such_arg:0' of a FusedBatchNormV3 (an op whose output args ferry knows)."""
    f = function("f", [node("b", "FusedBatchNormV3", ["x", "x", "x", "x", "x"], T=DT_FLOAT)],
                 {"y": "b:no_such_arg:0"})
    return pb_case(ctx, _call_graph([f]), ["has no output"], mentions=["no_such_arg"])


# --- SavedModel directories ----------------------------------------------------------------


@case
def tf_saved_model_valid(ctx):
    """A valid SavedModel, y = x + w with w = 0 from the checkpoint: the SavedModel builder makes models ferry runs."""
    zeros = np.zeros(4, np.float32)
    r = sm_case(ctx, [], run_exit=(0,), index=index_bytes({"w": bundle_entry(zeros)}), data=zeros.tobytes())
    r["inputs"] = {"x": ctx.npy(np.arange(4, dtype=np.float32).reshape(1, 4), "x.npy")}
    r["output_equals_input"] = True
    return r


@case
def tf_saved_model_no_saved_model_pb(ctx):
    """A directory with variables/ but no saved_model.pb."""
    r = sm_case(ctx, ["saved_model.pb", "not a tensorflow"])
    (ctx.root / r["model"] / "saved_model.pb").unlink()
    return r


@case
def tf_saved_model_pb_garbage(ctx):
    """saved_model.pb of random bytes."""
    r = sm_case(ctx, PARSE, file="saved_model.pb")
    (ctx.root / r["model"] / "saved_model.pb").write_bytes(np.random.default_rng(7).bytes(2048))
    return r


@case
def tf_saved_model_no_meta_graph(ctx):
    """A SavedModel with no meta graph."""
    return sm_case(ctx, ["meta graph"], sm=pb().SavedModel(saved_model_schema_version=1))


@case
def tf_saved_model_no_signature(ctx):
    """A SavedModel whose only signature is 'other', not serving_default."""
    return sm_case(ctx, ["signature"], mentions=["serving_default", "other"], sm=saved_model_proto(signature="other"),
                   run_exit=(1, 2))


@case
def tf_saved_model_signature_output_missing(ctx):
    """The signature's output is 'ghost:0', which no node produces."""
    return sm_case(ctx, UNDEFINED + ["not produced"], mentions=["ghost"], sm=saved_model_proto(outputs={"y": "ghost:0"}))


@case
def tf_saved_model_signature_input_not_placeholder(ctx):
    """The signature's input is the AddV2 'y'."""
    sm = saved_model_proto(inputs={"x": ("y:0", [1, 4])})
    return sm_case(ctx, ["not a placeholder"], mentions=["'y'"], sm=sm)


@case
def tf_saved_model_no_variables_dir(ctx):
    """A SavedModel with a variable but no variables/ directory."""
    return sm_case(ctx, ["variables"], variables=False)


@case
def tf_saved_model_index_missing(ctx):
    """variables/ without variables.index."""
    return sm_case(ctx, ["does not exist", "not a file", "no such file", "missing"], file=INDEX, index=False)


@case
def tf_saved_model_index_empty(ctx):
    """A 0-byte variables.index."""
    return sm_case(ctx, ["footer", "truncated", "empty"], file=INDEX, index=b"")


@case
def tf_saved_model_index_truncated(ctx):
    """variables.index cut in half."""
    whole = index_bytes()
    return sm_case(ctx, ["truncated", "corrupt", "magic"], file=INDEX, index=whole[: len(whole) // 2])


@case
def tf_saved_model_index_corrupt(ctx):
    """A byte flipped inside the index's data block (its block checksum no longer matches)."""
    data = bytearray(index_bytes())
    data[3] ^= 0x40
    return sm_case(ctx, CHECKSUM, file=INDEX, index=bytes(data))


@case
def tf_saved_model_index_bad_block_handle(ctx):
    """The footer's index block handle points at offset 2^40."""
    data = bytearray(index_bytes())
    footer = _varint(0) + _varint(8) + _varint(2**40) + _varint(64)
    data[-48:-8] = footer.ljust(40, b"\0")
    return sm_case(ctx, ["past the end", "truncated", "corrupt"] + OUT_OF_RANGE, file=INDEX, index=bytes(data))


@case
def tf_saved_model_index_compressed(ctx):
    """Index blocks marked snappy-compressed (type 1)."""
    items = [(b"", bundle_header().SerializeToString(deterministic=True)), (b"w", bundle_entry().SerializeToString(deterministic=True))]
    return sm_case(ctx, ["compressed"] + UNSUPPORTED, file=INDEX, index=sstable(items, block_type=1))


@case
def tf_saved_model_index_unsorted(ctx):
    """Index keys out of order ('w' before 'a')."""
    items = [(b"", bundle_header().SerializeToString(deterministic=True)), (b"w", bundle_entry().SerializeToString(deterministic=True)),
             (b"a", bundle_entry().SerializeToString(deterministic=True))]
    return sm_case(ctx, ["sorted", "order"], file=INDEX, index=sstable(items))


@case
def tf_saved_model_index_no_header(ctx):
    """An index without the header entry (empty key)."""
    items = [(b"w", bundle_entry().SerializeToString(deterministic=True))]
    return sm_case(ctx, ["header"], file=INDEX, index=sstable(items))


@case
def tf_saved_model_index_zero_shards(ctx):
    """A header saying num_shards = 0."""
    return sm_case(ctx, ["num_shards", "shard"], file=INDEX, index=index_bytes(header=bundle_header(0)))


@case
def tf_saved_model_index_entry_garbage(ctx):
    """The entry for 'w' is not a BundleEntryProto."""
    items = [(b"", bundle_header().SerializeToString(deterministic=True)), (b"w", b"\xff\xff\xff\xff")]
    return sm_case(ctx, ["does not parse"] + PARSE, mentions=["'w'"], file=INDEX, index=sstable(items))


@case
def tf_saved_model_data_missing(ctx):
    """variables.index without its data shard."""
    return sm_case(ctx, ["no such file", "does not exist", "cannot", "missing"], file=DATA, data=False)


@case
def tf_saved_model_data_truncated(ctx):
    """A data shard of 8 bytes; the entry for w needs bytes [0, 16)."""
    return sm_case(ctx, ["truncated", "past the end"], mentions=["'w'"], file=DATA, data=W.tobytes()[:8])


@case
def tf_saved_model_data_checksum(ctx):
    """A data shard whose bytes do not match the entry's crc32c."""
    data = bytearray(W.tobytes())
    data[5] ^= 1
    return sm_case(ctx, CHECKSUM, mentions=["'w'"], data=bytes(data))


@case
def tf_saved_model_entry_offset_overflow(ctx):
    """An entry at offset 2^63 - 8 of size 16 (offset + size overflows int64)."""
    idx = index_bytes({"w": bundle_entry(offset=2**63 - 8)})
    return sm_case(ctx, ["past the end", "truncated"] + OUT_OF_RANGE, mentions=["'w'"], file=DATA, index=idx)


@case
def tf_saved_model_entry_past_shard(ctx):
    """An entry at offset 1 of size 16 in a 16-byte shard."""
    idx = index_bytes({"w": bundle_entry(offset=1)})
    return sm_case(ctx, ["past the end", "truncated"] + OUT_OF_RANGE, mentions=["'w'"], file=DATA, index=idx)


@case
def tf_saved_model_entry_negative_offset(ctx):
    """An entry at offset -16."""
    idx = index_bytes({"w": bundle_entry(offset=-16)})
    return sm_case(ctx, ["negative"], mentions=["'w'"], file=None, index=idx)


@case
def tf_saved_model_entry_size_mismatch(ctx):
    """An f32 [4] entry claiming 2^40 bytes."""
    idx = index_bytes({"w": bundle_entry(size=2**40)})
    return sm_case(ctx, ["bytes"], mentions=["'w'"], index=idx)


@case
def tf_saved_model_entry_shard_out_of_range(ctx):
    """An entry in shard 7 of a 1-shard checkpoint."""
    idx = index_bytes({"w": bundle_entry(shard_id=7)})
    return sm_case(ctx, ["shard"], mentions=["'w'"], index=idx)


@case
def tf_saved_model_entry_many_shards(ctx):
    """A header of 99,999 shards whose files are absent: entry 'w' in shard 12345."""
    idx = index_bytes({"w": bundle_entry(shard_id=12345)}, header=bundle_header(99999))
    return sm_case(ctx, ["no such file", "does not exist", "cannot", "missing"], mentions=["'w'"],
                   file="variables/variables.data-12345-of-99999", index=idx)


@case
def tf_saved_model_entry_wrong_dtype(ctx):
    """The checkpoint stores w as int32 [4]; the graph reads it as float."""
    idx = index_bytes({"w": bundle_entry(np.array([1, 2, 3, 4], np.int32), dtype=DT_INT32)})
    return sm_case(ctx, ["dtype"], mentions=["'w'", "DT_FLOAT"], index=idx,
                   data=np.array([1, 2, 3, 4], np.int32).tobytes())


@case
def tf_saved_model_entry_unknown_dtype(ctx):
    """A checkpoint entry of dtype enum 99."""
    idx = index_bytes({"w": bundle_entry(dtype=99)})
    return sm_case(ctx, ["dtype"], mentions=["'w'", "99"], index=idx)


@case
def tf_saved_model_entry_huge_shape(ctx):
    """A checkpoint entry of shape [2^31, 2^31, 2^31]."""
    idx = index_bytes({"w": bundle_entry(shape=[2**31] * 3)})
    return sm_case(ctx, TOO_LARGE + ["invalid"], mentions=["'w'"], index=idx)


@case
def tf_saved_model_entry_sliced(ctx):
    """A partitioned (sliced) checkpoint entry."""
    e = bundle_entry()
    e.slices.add().extent.add(start=0, length=4)
    return sm_case(ctx, ["partitioned", "sliced"] + UNSUPPORTED, mentions=["'w'"], index=index_bytes({"w": e}))


@case
def tf_saved_model_variable_shape_contradiction(ctx):
    """VarHandleOp w declares shape [4]; the checkpoint holds w as [5]."""
    w5 = np.arange(5, dtype=np.float32)
    return sm_case(ctx, ["declared", "shape"], mentions=["'w'", "[4]", "[5]"], index=index_bytes({"w": bundle_entry(w5)}),
                   data=w5.tobytes())


@case
def tf_saved_model_unknown_variable(ctx):
    """A VarHandleOp whose shared_name the checkpoint does not have."""
    g = graph_def([placeholder(), node("w", "VarHandleOp", dtype=DT_FLOAT, shape=[4], shared_name="ghost_var"),
                   node("w_read", "ReadVariableOp", ["w"], dtype=DT_FLOAT),
                   node("y", "AddV2", ["x", "w_read"], T=DT_FLOAT)])
    return sm_case(ctx, ["cannot find variable", "no tensor"], mentions=["ghost_var"], sm=saved_model_proto(g))


@case
def tf_saved_model_object_graph_garbage(ctx):
    """A checkpoint object graph (_CHECKPOINTABLE_OBJECT_GRAPH) that is not a TrackableObjectGraph."""
    payload = b"\xff" * 9
    lens = _varint(len(payload))
    strings = lens + struct.pack("<I", masked_crc(lens)) + payload
    og = pb().BundleEntryProto(dtype=DT_STRING, shard_id=0, offset=len(W.tobytes()), size=len(strings),
                               crc32c=masked_crc(strings))
    idx = index_bytes({"w": bundle_entry(), "_CHECKPOINTABLE_OBJECT_GRAPH": og})
    return sm_case(ctx, ["does not parse", "object graph"], index=idx, data=W.tobytes() + strings)


@case
def tf_saved_model_object_graph_bad_child(ctx):
    """Object graphs whose child 'layer' points at node id 1000."""
    ckpt = pb().TrackableObjectGraph()
    ckpt.nodes.add().children.add(node_id=1000, local_name="layer")
    payload = ckpt.SerializeToString(deterministic=True)
    lens = _varint(len(payload))
    strings = lens + struct.pack("<I", masked_crc(lens)) + payload
    og = pb().BundleEntryProto(dtype=DT_STRING, shard_id=0, offset=len(W.tobytes()), size=len(strings),
                               crc32c=masked_crc(strings))
    saved = pb().SavedObjectGraph()
    saved.nodes.add().children.add(node_id=1000, local_name="layer")
    idx = index_bytes({"w": bundle_entry(), "_CHECKPOINTABLE_OBJECT_GRAPH": og})
    return sm_case(ctx, ["out-of-range", "node id"] + OUT_OF_RANGE, mentions=["layer"], index=idx,
                   data=W.tobytes() + strings, sm=saved_model_proto(object_graph=saved))


def _outside_checkpoint(ctx):
    """A valid checkpoint outside the case's model directory: OUT_DIR/outside/tf_vars/."""
    out = ctx.root / "outside" / "tf_vars"
    out.mkdir(parents=True, exist_ok=True)
    (out / "variables.index").write_bytes(index_bytes())
    (out / "variables.data-00000-of-00001").write_bytes(W.tobytes())
    return out


def _symlink_case(ctx, link, target, file):
    r = sm_case(ctx, ESCAPE, file=file, variables=link != "variables")
    path = ctx.root / r["model"] / link
    if path.exists() or path.is_symlink():
        path.unlink()
    try:
        os.symlink(target, path)
    except OSError as e:
        r["skip"] = f"cannot make symlinks here: {e}"
    return r


@case
def tf_saved_model_variables_symlink_outside(ctx):
    """variables/ is a symlink to a valid checkpoint outside the model directory."""
    return _symlink_case(ctx, "variables", _outside_checkpoint(ctx), INDEX)


@case
def tf_saved_model_data_symlink_outside(ctx):
    """The data shard is a symlink to a file outside the model directory."""
    target = _outside_checkpoint(ctx) / "variables.data-00000-of-00001"
    return _symlink_case(ctx, DATA, target, DATA)


@case
def tf_saved_model_pb_symlink_outside(ctx):
    """saved_model.pb is a symlink to a SavedModel outside the model directory."""
    out = ctx.root / "outside" / "tf_saved_model.pb"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(saved_model_proto().SerializeToString(deterministic=True))
    return _symlink_case(ctx, "saved_model.pb", out, "saved_model.pb")
