#!/usr/bin/env python3
"""Prints expected outputs from onnxruntime for the linalg op tests.

The test files (tests/ops/{conv,conv_transpose,gemm,matmul,einsum,pool}_test.cc)
build their inputs with pattern(n, seed) below — multiples of 1/8 in [-1, 1] —
so only the outputs are pasted into them. Run once and paste:

    /work/main/.venv/bin/python tests/ops/gen_linalg_refs.py [filter]

Each case prints as `// name  shape` followed by a C++ initializer list.
"""
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def pattern(n, seed):
    """Same as pattern() in the C++ tests: ((i * 37 + seed * 11) % 17 - 8) / 8."""
    return np.array([((i * 37 + seed * 11) % 17 - 8) / 8.0 for i in range(n)], dtype=np.float32)


def data(shape, seed):
    return pattern(int(np.prod(shape)), seed).reshape(shape)


def run(op, inputs, attrs, num_outputs=1, opset=22):
    ins = [helper.make_tensor_value_info(f"in{i}", TensorProto.FLOAT, list(x.shape)) for i, x in enumerate(inputs)]
    outs = [helper.make_tensor_value_info(f"out{i}", TensorProto.FLOAT if i == 0 else TensorProto.INT64, None)
            for i in range(num_outputs)]
    node = helper.make_node(op, [f"in{i}" for i in range(len(inputs))], [f"out{i}" for i in range(num_outputs)],
                            **attrs)
    model = helper.make_model(helper.make_graph([node], "g", ins, outs),
                              opset_imports=[helper.make_opsetid("", opset)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {f"in{i}": x for i, x in enumerate(inputs)})


def fmt(a):
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        items = [("%.9g" % v) for v in flat]
    else:
        items = [str(int(v)) for v in flat]
    lines, line = [], ""
    for it in items:
        if len(line) + len(it) + 2 > 110:
            lines.append(line.rstrip())
            line = ""
        line += it + ", "
    lines.append(line.rstrip().rstrip(","))
    return "{" + "\n ".join(lines) + "}"


CASES = []


def case(name, op, shapes, attrs, num_outputs=1, opset=22):
    CASES.append((name, op, shapes, attrs, num_outputs, opset))


# --- Conv -------------------------------------------------------------------------
case("conv2d_pad_stride", "Conv", [(1, 2, 5, 5), (3, 2, 3, 3), (3,)], dict(pads=[1, 1, 1, 1], strides=[2, 2]))
case("conv2d_group_dilation_asym", "Conv", [(1, 4, 4, 5), (2, 2, 2, 2)],
     dict(group=2, dilations=[2, 2], pads=[0, 1, 1, 0], strides=[1, 2]))
case("conv1d_same_upper", "Conv", [(2, 3, 7), (2, 3, 3)], dict(auto_pad="SAME_UPPER", strides=[2]))
case("conv1d_same_lower_k4", "Conv", [(1, 1, 6), (1, 1, 4)], dict(auto_pad="SAME_LOWER"))
case("conv3d", "Conv", [(1, 2, 3, 4, 4), (1, 2, 2, 2, 2), (1,)], dict(strides=[1, 2, 2]))
case("conv2d_depthwise_valid", "Conv", [(1, 3, 4, 4), (3, 1, 3, 3)], dict(group=3, auto_pad="VALID"))
# --- ConvTranspose ------------------------------------------------------------------
case("convt2d_stride_pads_outpad", "ConvTranspose", [(1, 2, 2, 2), (2, 1, 3, 3), (1,)],
     dict(strides=[2, 2], pads=[1, 0, 0, 1], output_padding=[1, 1]))
case("convt1d_group_dilation", "ConvTranspose", [(1, 2, 3), (2, 2, 2)], dict(group=2, dilations=[2]))
case("convt1d_output_shape_notset", "ConvTranspose", [(1, 1, 4), (1, 2, 3)], dict(strides=[2], output_shape=[8]))
case("convt1d_output_shape_same_upper", "ConvTranspose", [(1, 1, 4), (1, 2, 3)],
     dict(strides=[2], output_shape=[8], auto_pad="SAME_UPPER"))
case("convt1d_same_lower", "ConvTranspose", [(1, 1, 3), (1, 1, 4)], dict(strides=[2], auto_pad="SAME_LOWER"))
case("convt3d", "ConvTranspose", [(1, 1, 2, 2, 2), (1, 1, 1, 2, 2)], dict(strides=[1, 2, 2]))
# --- Gemm ---------------------------------------------------------------------------
case("gemm_trans_alpha_beta_row", "Gemm", [(4, 2), (3, 4), (3,)], dict(transA=1, transB=1, alpha=0.5, beta=2.0))
case("gemm_col_c", "Gemm", [(2, 3), (3, 4), (2, 1)], dict())
case("gemm_no_c", "Gemm", [(3, 2), (2, 2)], dict(alpha=3.0))
# --- MatMul -------------------------------------------------------------------------
case("matmul_3d_2d", "MatMul", [(2, 3, 4), (4, 2)], dict())
case("matmul_1d_3d", "MatMul", [(3,), (2, 3, 4)], dict())
case("matmul_broadcast_4d", "MatMul", [(2, 1, 2, 3), (3, 3, 2)], dict())
case("matmul_2d_1d", "MatMul", [(4, 3), (3,)], dict())
case("matmul_1d_1d", "MatMul", [(3,), (3,)], dict())
# --- Einsum -------------------------------------------------------------------------
case("einsum_bmm", "Einsum", [(2, 2, 3), (2, 3, 2)], dict(equation="bij,bjk->bik"), opset=12)
case("einsum_attention", "Einsum", [(1, 2, 3, 2), (1, 2, 2, 2)], dict(equation="bhqd,bhkd->bhqk"), opset=12)
case("einsum_ellipsis_implicit", "Einsum", [(2, 1, 2, 3), (1, 3, 3, 2)], dict(equation="...ij,...jk"), opset=12)
case("einsum_three_operands", "Einsum", [(2, 3, 2), (2, 2, 2), (2, 2)], dict(equation="ijk,ikl,il->jl"), opset=12)
case("einsum_diag_sum", "Einsum", [(3, 3, 2)], dict(equation="iij->j"), opset=12)
case("einsum_implicit_transpose", "Einsum", [(2, 3, 2)], dict(equation="kji"), opset=12)
# --- MaxPool ------------------------------------------------------------------------
case("maxpool2d_k3s2p1", "MaxPool", [(1, 2, 5, 5)], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), 2)
case("maxpool2d_ceil_colmajor", "MaxPool", [(1, 1, 5, 5)],
     dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1, storage_order=1), 2)
case("maxpool2d_dilation", "MaxPool", [(1, 1, 5, 5)], dict(kernel_shape=[2, 2], dilations=[2, 2]), 2)
case("maxpool1d_same_upper", "MaxPool", [(1, 2, 5)], dict(kernel_shape=[2], strides=[2], auto_pad="SAME_UPPER"), 2)
case("maxpool3d", "MaxPool", [(1, 1, 3, 3, 4)], dict(kernel_shape=[2, 2, 2], strides=[1, 1, 2]), 2)
# --- AveragePool --------------------------------------------------------------------
case("avgpool2d_pad_exclude", "AveragePool", [(1, 1, 5, 5)], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
case("avgpool2d_pad_include", "AveragePool", [(1, 1, 5, 5)],
     dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1))
case("avgpool2d_ceil_include", "AveragePool", [(1, 1, 6, 5)],
     dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1))
case("avgpool2d_ceil_exclude", "AveragePool", [(1, 1, 6, 5)],
     dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1))
case("avgpool1d_same_lower", "AveragePool", [(1, 1, 6)], dict(kernel_shape=[4], strides=[2], auto_pad="SAME_LOWER"))
case("avgpool2d_dilation_include", "AveragePool", [(1, 1, 5, 5)],
     dict(kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1))
case("avgpool3d", "AveragePool", [(1, 1, 3, 3, 4)], dict(kernel_shape=[2, 2, 2], strides=[1, 1, 2]))


def main():
    filt = sys.argv[1] if len(sys.argv) > 1 else ""
    for name, op, shapes, attrs, nout, opset in CASES:
        if filt not in name:
            continue
        inputs = [data(s, seed) for seed, s in enumerate(shapes)]
        outs = run(op, inputs, attrs, nout, opset)
        for i, o in enumerate(outs):
            print(f"// {name} out{i} {list(o.shape)}")
            print(fmt(o) + ";")


if __name__ == "__main__":
    main()
