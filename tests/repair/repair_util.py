"""Shared by the repair tests: running a model in ONNX Runtime and in ferry
(loaded with repair=True) and comparing them."""

import numpy as np

# |ferry - ort| <= ATOL + RTOL |ort|, per backend. The reference interpreter computes in
# f32 (or wider) like ORT's kernels; the cpu backend's vectorized erf/tanh/exp and
# blocked matmuls round differently, hence the looser bound.
TOLERANCE = {"reference": (1e-5, 1e-4), "cpu": (1e-4, 1e-3)}


def ort_outputs(ort, path, feeds):
    s = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def ferry_outputs(ferry, path, feeds, backend):
    model = ferry.load(str(path), repair=True)
    return model.compile(backend=backend).run(feeds), model.inspect()["repairs"]


def assert_close(got, want, backend, what, tolerance=None):
    atol, rtol = (tolerance or TOLERANCE)[backend]
    for name, w in want.items():
        assert name in got, f"{what}: ferry has no output {name!r}"
        g = np.asarray(got[name])
        assert g.shape == w.shape, f"{what} {name}: shape {g.shape}, ORT {w.shape}"
        if not np.issubdtype(w.dtype, np.floating):
            np.testing.assert_array_equal(g, w, err_msg=f"{what} {name} ({backend})")
            continue
        err = np.abs(g.astype(np.float64) - w)
        bound = atol + rtol * np.abs(w)
        assert np.all(err <= bound), f"{what} {name} ({backend}): max |diff| {err.max():.3g}, " \
            f"worst excess {(err - bound).max():.3g} (atol {atol}, rtol {rtol})"


def contrib_ops(model):
    """(domain, op_type) of every com.microsoft node of an onnx.ModelProto."""
    return sorted({(n.domain, n.op_type) for n in model.graph.node if n.domain == "com.microsoft"})
