"""Malformed PyTorch .pt2 archives for the bad-inputs corpus (gen_bad_inputs.py imports them).

Written without torch, with zipfile and json: the layout is what torch 2.15's
torch.export.save writes (src/frontends/torch/pt2_archive.h), for the program
y = relu(x + w), x a [1, 4] f32 user input and w a [1, 4] parameter stored as raw
bytes in data/weights/weight_0. torch_pt2_valid shows that archive runs; every
other case breaks one thing: the zip itself (names, sizes, compression, a cut),
the program JSON (truncated, too deep, wrong types, a bad symbolic size), or the
payloads (pickled, missing, too small for their tensor), and the refusals of
anything that would need unpickling (use_pickle, custom objects, the pre-2.8
layouts, torch.save files).
"""

from __future__ import annotations

import copy
import io
import json
import struct
import zipfile

import numpy as np

from cases.registry import PARSE, TOO_LARGE, UNDEFINED, UNSUPPORTED, both, case, expect

ROOT = "model/"
FLOAT = 7
PICKLE = ["never unpickles", "pickle"]
NAME = ["'..'", "absolute", "backslash", "root folder", "control character"]


def tensor_meta(shape, dtype=FLOAT, sizes=None):
    strides, s = [], 1
    for d in reversed(shape):
        strides.insert(0, s)
        s *= d
    return {"dtype": dtype, "sizes": sizes if sizes is not None else [{"as_int": d} for d in shape],
            "requires_grad": False, "device": {"type": "cpu", "index": None},
            "strides": [{"as_int": st} for st in strides], "storage_offset": {"as_int": 0}, "layout": 7}


def targ(name):
    return {"as_tensor": {"name": name}}


def node(target, name, inputs, out=None):
    return {"target": f"torch.ops.{target}", "inputs": [{"name": k, "arg": v, "kind": 1} for k, v in inputs],
            "outputs": [targ(out or name)], "metadata": {}, "name": name}


def program(x_sizes=None):
    """The ExportedProgram JSON of y = relu(x + w)."""
    meta = tensor_meta([1, 4])
    return {
        "graph_module": {
            "graph": {
                "inputs": [targ("p_w"), targ("x")],
                "outputs": [targ("relu")],
                "nodes": [node("aten.add.Tensor", "add", [("self", targ("x")), ("other", targ("p_w"))]),
                          node("aten.relu.default", "relu", [("self", targ("add"))])],
                "tensor_values": {"p_w": meta, "x": tensor_meta([1, 4], sizes=x_sizes), "add": meta, "relu": meta},
                "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": False,
                "custom_obj_values": {}, "sym_float_values": {},
            },
            "signature": {
                "input_specs": [{"parameter": {"arg": {"name": "p_w"}, "parameter_name": "w"}},
                                {"user_input": {"arg": targ("x")}}],
                "output_specs": [{"user_output": {"arg": targ("relu")}}],
            },
            "module_call_graph": [], "metadata": {}, "treespec_namedtuple_fields": {},
        },
        "opset_version": {"aten": 10}, "range_constraints": {}, "schema_version": {"major": 8, "minor": 20},
        "verifiers": [], "torch_version": "2.15.0", "guards_code": [],
    }


def weights_config(use_pickle=False, path="weight_0", meta=None):
    return {"config": {"w": {"path_name": path, "is_param": True, "use_pickle": use_pickle,
                             "tensor_meta": meta or tensor_meta([1, 4])}}}


def entries(prog=None, wcfg=None, weight=None):
    """Archive entries (name without the root -> bytes) of the valid program."""
    return {
        "archive_format": b"pt2",
        "archive_version": b"0",
        "models/model.json": json.dumps(prog or program()).encode(),
        "data/weights/model_weights_config.json": json.dumps(wcfg or weights_config()).encode(),
        "data/weights/weight_0": weight if weight is not None else np.zeros(4, np.float32).tobytes(),
        "data/constants/model_constants_config.json": b'{"config": {}}',
        "data/sample_inputs/model.pt": b"",
    }


def archive(ents, root=ROOT, compress=zipfile.ZIP_STORED):
    """A zip of the entries under `root` (names are kept exactly as given)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compress) as z:
        for name, data in ents.items():
            info = zipfile.ZipInfo(root + name if not name.startswith("!") else name[1:])
            info.compress_type = compress
            z.writestr(info, data)
    return buf.getvalue()


def pt2_case(ctx, data, fragments, mentions=(), exit=(2,)):
    return {"model": ctx.save(data, "model.pt2"), "inputs": {"x": ctx.npy(np.arange(4, dtype=np.float32).reshape(1, 4), "x.npy")},
            **both(exit=exit, fragments=fragments, mentions=list(mentions))}


@case
def torch_pt2_valid(ctx):
    """A valid .pt2 archive, relu(x + 0) of x >= 0: the corpus's .pt2 builder makes programs ferry runs."""
    c = pt2_case(ctx, archive(entries()), [], exit=[0])
    c["output_equals_input"] = True
    return c


@case
def torch_pt2_pickled_weight(ctx):
    """A weight payload marked use_pickle: true (a tensor subclass): refused with the re-save recipe."""
    return pt2_case(ctx, archive(entries(wcfg=weights_config(use_pickle=True))), PICKLE, mentions=["torch.export.save"])


@case
def torch_pt2_custom_object(ctx):
    """A torchbind object under data/constants/custom_obj_0 (a pickle): refused."""
    e = entries()
    e["data/constants/custom_obj_0"] = b"\x80\x02}q\x00."
    return pt2_case(ctx, archive(e), PICKLE, mentions=["custom_obj_0"])


@case
def torch_pt2_opaque_object(ctx):
    """An opaque Python object under data/constants/opaque_obj_0 (a plain pickle): refused."""
    e = entries()
    e["data/constants/opaque_obj_0"] = b"\x80\x04N."
    return pt2_case(ctx, archive(e), PICKLE, mentions=["opaque_obj_0"])


@case
def torch_pt2_torch24_layout(ctx):
    """The torch <= 2.4 layout (serialized_state_dict.pt, a pickle): refused with the re-save recipe."""
    e = {"serialized_exported_program.json": json.dumps(program()).encode(), "serialized_state_dict.pt": b"\x80\x02."}
    return pt2_case(ctx, archive(e), ["torch <= 2.4", "pickle"], mentions=["torch.export.save"])


@case
def torch_pt2_torch27_layout(ctx):
    """The torch 2.5-2.7 layout, weights as a pickled data/weights/model.pt: refused."""
    e = entries()
    del e["data/weights/weight_0"]
    e["data/weights/model.pt"] = b"\x80\x02."
    return pt2_case(ctx, archive(e), PICKLE, mentions=["data/weights/model.pt"])


@case
def torch_pt2_dotdot_entry(ctx):
    """A zip entry named model/../evil (path traversal)."""
    e = entries()
    e["../evil"] = b"x"
    return pt2_case(ctx, archive(e), NAME, mentions=["evil"])


@case
def torch_pt2_absolute_entry(ctx):
    """A zip entry with an absolute name, /etc/evil."""
    e = entries()
    e["!/etc/evil"] = b"x"
    return pt2_case(ctx, archive(e), NAME, mentions=["/etc/evil"])


@case
def torch_pt2_backslash_entry(ctx):
    """A zip entry whose name holds a backslash (a Windows path)."""
    e = entries()
    e["data\\weights\\w"] = b"x"
    return pt2_case(ctx, archive(e), NAME)


@case
def torch_pt2_two_roots(ctx):
    """Entries outside the archive's one root folder."""
    e = entries()
    e["!other/models/model.json"] = b"{}"
    return pt2_case(ctx, archive(e), NAME, mentions=["other/models/model.json"])


@case
def torch_pt2_truncated_archive(ctx):
    """A .pt2 cut in half (no central directory)."""
    data = archive(entries())
    return pt2_case(ctx, data[: len(data) // 2], PARSE + ["zip"])


@case
def torch_pt2_random_bytes(ctx):
    """4 KiB of seeded random bytes named model.pt2."""
    data = np.random.default_rng(11).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    return pt2_case(ctx, data, PARSE + ["zip"])


@case
def torch_pt2_zip_bomb(ctx):
    """A deflated 16 MiB weight of zeros in a few KiB (ratio ~1000): refused before inflating."""
    e = entries()
    e["data/weights/weight_0"] = bytes(16 << 20)
    return pt2_case(ctx, archive(e, compress=zipfile.ZIP_DEFLATED), ["zip bomb", "inflates"])


@case
def torch_pt2_size_mismatch(ctx):
    """The central directory says weight_0 holds 1 MiB; 16 bytes are stored."""
    data = bytearray(archive(entries()))
    name = (ROOT + "data/weights/weight_0").encode()
    at = data.find(b"PK\x01\x02")  # central directory headers: find weight_0's
    while at >= 0:
        n = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46: at + 46 + n]) == name:
            struct.pack_into("<I", data, at + 24, 1 << 20)  # uncompressed size
            struct.pack_into("<I", data, at + 20, 1 << 20)  # compressed size
            break
        at = data.find(b"PK\x01\x02", at + 4)
    return pt2_case(ctx, bytes(data), PARSE + ["truncated", "inconsistent", "zip"])


@case
def torch_pt2_no_archive_format(ctx):
    """A zip without archive_format: not a torch.export archive."""
    e = entries()
    del e["archive_format"]
    return pt2_case(ctx, archive(e), ["not a torch.export"])


@case
def torch_pt2_truncated_json(ctx):
    """models/model.json cut in the middle."""
    e = entries()
    e["models/model.json"] = e["models/model.json"][:300]
    return pt2_case(ctx, archive(e), ["not valid json"], mentions=["models/model.json"])


@case
def torch_pt2_json_too_deep(ctx):
    """models/model.json nesting 100,000 lists."""
    e = entries()
    e["models/model.json"] = b"[" * 100_000 + b"]" * 100_000
    return pt2_case(ctx, archive(e), ["deeper", "nest"])


@case
def torch_pt2_json_wrong_types(ctx):
    """A node's target is a number, not a string."""
    p = program()
    p["graph_module"]["graph"]["nodes"][0]["target"] = 7
    return pt2_case(ctx, archive(entries(prog=p)), ["malformed"])


@case
def torch_pt2_wrong_schema(ctx):
    """A program of graph schema 3.2 (ferry reads 8.x)."""
    p = program()
    p["schema_version"] = {"major": 3, "minor": 2}
    return pt2_case(ctx, archive(entries(prog=p)), ["schema"], mentions=["3.2"])


@case
def torch_pt2_bad_symbolic_size(ctx):
    """An input size written as FloorDiv(Symbol('s0'), Integer(2)), outside the sympy subset ferry reads."""
    sizes = [{"as_expr": {"expr_str": "FloorDiv(Symbol('s0', positive=True, integer=True), Integer(2))"}}, {"as_int": 4}]
    return pt2_case(ctx, archive(entries(prog=program(x_sizes=sizes))), ["not supported", "symbolic size"],
                    mentions=["FloorDiv"])


@case
def torch_pt2_sympy_too_deep(ctx):
    """An input size nesting Mul 1,000 deep."""
    expr = "Symbol('s0')"
    for _ in range(1000):
        expr = f"Mul(Integer(2), {expr})"
    sizes = [{"as_expr": {"expr_str": expr}}, {"as_int": 4}]
    return pt2_case(ctx, archive(entries(prog=program(x_sizes=sizes))), ["symbolic size"])


@case
def torch_pt2_missing_payload(ctx):
    """weights config names weight_9, which the archive does not hold."""
    return pt2_case(ctx, archive(entries(wcfg=weights_config(path="weight_9"))), UNDEFINED + ["not in the archive"],
                    mentions=["weight_9"])


@case
def torch_pt2_payload_path_traversal(ctx):
    """weights config names ../../etc/passwd as a payload."""
    return pt2_case(ctx, archive(entries(wcfg=weights_config(path="../../etc/passwd"))), ["not a plain file name"])


@case
def torch_pt2_payload_too_small(ctx):
    """weight_0 holds 8 bytes for an f32[1, 4] tensor."""
    return pt2_case(ctx, archive(entries(weight=bytes(8))), ["storage", "element"], mentions=["'w'"])


@case
def torch_pt2_huge_weight_meta(ctx):
    """The weight's tensor_meta claims f32[2^30, 2^30] over a 16-byte storage."""
    meta = tensor_meta([1 << 30, 1 << 30])
    p = program()
    p["graph_module"]["graph"]["tensor_values"]["p_w"] = meta
    return pt2_case(ctx, archive(entries(prog=p, wcfg=weights_config(meta=meta))), TOO_LARGE + ["storage", "overflow"])


@case
def torch_pt2_unknown_op(ctx):
    """A node calling aten.my_custom_op.default: inspect lists it as unsupported."""
    p = program()
    p["graph_module"]["graph"]["nodes"][1]["target"] = "torch.ops.aten.my_custom_op.default"
    return pt2_case(ctx, archive(entries(prog=p)), UNSUPPORTED, mentions=["my_custom_op"])


@case
def torch_pt2_reads_undefined_tensor(ctx):
    """relu reads 'nothing', which no node produces."""
    p = program()
    p["graph_module"]["graph"]["nodes"][1]["inputs"][0]["arg"] = targ("nothing")
    return pt2_case(ctx, archive(entries(prog=p)), UNDEFINED + ["no earlier node"], mentions=["nothing"])


@case
def torch_pt2_inplace_read_later(ctx):
    """add_ writes into x's sum while relu reads the old value afterwards: refused, not silently reordered."""
    p = copy.deepcopy(program())
    g = p["graph_module"]["graph"]
    g["nodes"] = [node("aten.mul.Tensor", "mul", [("self", targ("x")), ("other", targ("p_w"))]),
                  node("aten.add_.Tensor", "add_", [("self", targ("mul")), ("other", targ("x"))]),
                  node("aten.add.Tensor", "relu", [("self", targ("mul")), ("other", targ("add_"))])]
    g["tensor_values"].update({"mul": tensor_meta([1, 4]), "add_": tensor_meta([1, 4])})
    return pt2_case(ctx, archive(entries(prog=p)), ["in place"], mentions=["mul"])


@case
def torch_pt2_mutates_buffer(ctx):
    """The signature says the program updates a buffer (batch-norm statistics in training mode)."""
    p = program()
    p["graph_module"]["signature"]["output_specs"].insert(
        0, {"buffer_mutation": {"arg": {"name": "add"}, "buffer_name": "bn.running_mean"}})
    return pt2_case(ctx, archive(entries(prog=p)), ["writes state", "eval"], mentions=["bn.running_mean"])


@case
def torch_pt2_torch_save_file(ctx):
    """A torch.save pickle named model.pt: refused without being opened."""
    path = ctx.dir / "model.pt"
    path.write_bytes(b"\x80\x02ctorch\nload\nq\x00.")
    return {"model": ctx.rel(path), "inputs": {}, **both(fragments=["never unpickles"], mentions=["torch.export"])}
