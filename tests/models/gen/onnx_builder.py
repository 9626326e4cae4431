"""A few lines of sugar over onnx.helper for writing test graphs by hand.

    g = GraphBuilder("relu_model", opset=17)
    x = g.input("x", [1, 3, 8, 8])                  # also records the InputSpec
    y = g.op("Relu", [x])
    g.output(g.op("Conv", [y, g.const(w)], pads=[1, 1, 1, 1]), "out")
    model, specs, outputs = g.build()

Output types and shapes come from ONNX shape inference, so a graph output
only needs a name.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

from common import input_spec

_NP_TO_ONNX = {
    "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "float64": TensorProto.DOUBLE,
    "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "int16": TensorProto.INT16,
    "int32": TensorProto.INT32, "int64": TensorProto.INT64, "bool": TensorProto.BOOL,
}


class GraphBuilder:
    def __init__(self, name, opset=17, extra_opsets=None, check=True):
        self.name, self.opset, self.check = name, opset, check
        self.extra_opsets = dict(extra_opsets or {})
        self.nodes, self.inits, self.inputs, self.specs = [], [], [], []
        self.outputs = []  # graph output names
        self._declared = {}  # output name -> dtype, for outputs inference cannot type
        self._count = {}

    def _fresh(self, prefix):
        n = self._count.get(prefix, 0)
        self._count[prefix] = n + 1
        return f"{prefix}_{n}"

    def input(self, name, shape, dtype="float32", dist="normal", dims=None, **kw):
        """A graph input; `dims` overrides the declared dims (e.g. a symbolic "seq")."""
        self.inputs.append(helper.make_tensor_value_info(name, _NP_TO_ONNX[dtype], dims or shape))
        self.specs.append(input_spec(name, shape, dtype, dist, **kw))
        return name

    def const(self, value, dtype=None, name=None):
        """An initializer holding `value` (array-like); returns its name."""
        arr = np.asarray(value, dtype=dtype)
        # Python numbers and lists, and float64 arrays, default to float32 (use i64()
        # for integers); numpy scalars and other arrays keep their dtype.
        plain = not isinstance(value, (np.ndarray, np.generic))
        if dtype is None and (plain or arr.dtype == np.float64):
            arr = arr.astype(np.float32)
        name = name or self._fresh("c")
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def i64(self, value):
        return self.const(np.asarray(value, dtype=np.int64))

    def op(self, op_type, inputs, outputs=1, name=None, domain="", **attrs):
        """Appends a node; returns its output name, or a list if outputs > 1.

        An input of None becomes "" (an omitted optional input)."""
        name = name or self._fresh(op_type)
        outs = [f"{name}_out{i}" if outputs > 1 else f"{name}_out" for i in range(outputs)]
        ins = ["" if i is None else i for i in inputs]
        self.nodes.append(helper.make_node(op_type, ins, outs, name=name, domain=domain, **attrs))
        return outs if outputs > 1 else outs[0]

    def output(self, value, name=None, dtype=None, shape=None):
        """Marks `value` as a graph output, renamed `name` through an Identity if given.

        `dtype` and `shape` are needed only where ONNX shape inference cannot type the value."""
        if name and name != value:
            self.nodes.append(helper.make_node("Identity", [value], [name], name=f"out_{name}"))
            value = name
        self.outputs.append(value)
        if dtype:
            self._declared[value] = (dtype, shape)
        return value

    def build(self):
        """Returns (ModelProto, input specs, output names); raises if ONNX rejects it."""
        opsets = [helper.make_opsetid("", self.opset)]
        opsets += [helper.make_opsetid(d, v) for d, v in self.extra_opsets.items()]
        # Outputs start untyped; shape inference fills them in below.
        outs = [helper.make_empty_tensor_value_info(o) for o in self.outputs]
        graph = helper.make_graph(self.nodes, self.name, self.inputs, outs, self.inits)
        model = helper.make_model(graph, opset_imports=opsets, producer_name="ferry-tests",
                                  ir_version=helper.find_min_ir_version_for(opsets))
        inferred = shape_inference.infer_shapes(model, strict_mode=not self._declared)
        known = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
        del model.graph.output[:]
        for o in self.outputs:
            vi = known.get(o)
            if vi is None or not vi.type.tensor_type.elem_type:
                if o not in self._declared:
                    raise ValueError(f"{self.name}: shape inference did not type output {o}")
                dtype, shape = self._declared[o]
                vi = helper.make_tensor_value_info(o, _NP_TO_ONNX[dtype], shape)
            model.graph.output.append(vi)
        if self.check:
            onnx.checker.check_model(model, full_check=True)
        return model, self.specs, list(self.outputs)
