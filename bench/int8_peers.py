"""int8 side by side for bench/precision_bench.py --int8: ferry `convert --precision int8`
calibrated on the script's seeded samples, ONNX Runtime's own quantize_static on the same
samples (per-channel s8 weights, u8 activations; QDQ and QOperator, the faster one kept) and
OpenVINO reading that same QDQ file (how it runs ONNX int8)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

CALIBRATION_SAMPLES = 8                 # as ferry's own default count (seeds 1..N)
EVAL_SEEDS = [100, 101, 102, 103]       # top-1 agreement inputs (classifiers)


def calibration_samples(specs, make_inputs, n=CALIBRATION_SAMPLES):
    return [make_inputs(specs, seed=s) for s in range(1, n + 1)]


def ferry_int8_model(ferry, path, samples, out: Path):
    """`ferry convert --precision int8 --calibration` on `samples`: the saved decisions. Its accuracy
    guard runs the reference interpreter (lowered nodes + 2) times per sample: minutes on resnet50."""
    npz = out.with_suffix(".calib.npz")
    np.savez(npz, **{k: np.stack([s[k] for s in samples]) for k in samples[0]})
    r = subprocess.run([ferry, "convert", str(path), "--precision", "int8", "--calibration", str(npz), "-o", str(out)],
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"ferry convert --precision int8 failed: {r.stderr.strip()[-2000:]}")
    return out


def ort_int8_models(path, samples, tmp: Path, reuse=False):
    """{"qdq": path, "qoperator": path} from onnxruntime.quantization.quantize_static (`reuse`: files already
    in `tmp` are kept), and {format: error} for the formats its quantizer failed on (it raises on some
    exported graphs: EfficientNet-B0 in onnxruntime 1.2x, an initializer it looks up and does not find)."""
    import onnxruntime
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    onnxruntime.set_default_logger_severity(3)  # its unused-initializer warnings, one per node

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(samples)

        def get_next(self):
            return next(self.it, None)

    out, failed = {}, {}
    for fmt, qf in (("qdq", QuantFormat.QDQ), ("qoperator", QuantFormat.QOperator)):
        p = tmp / f"{Path(path).stem}_ort_{fmt}.onnx"
        if reuse and p.exists():
            out[fmt] = p
            continue
        try:
            quantize_static(str(path), str(p), Reader(), quant_format=qf, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        except Exception as e:  # noqa: BLE001  (the peer's failure is a result, reported per model)
            failed[fmt] = f"{type(e).__name__}: {e}"
            p.unlink(missing_ok=True)
            continue
        out[fmt] = p
    return out, failed


def top1_agreement(outs, refs):
    """Share of inputs whose argmax agrees (None unless the output is [1, classes])."""
    if refs[0].ndim != 2 or refs[0].shape[0] != 1 or refs[0].shape[1] < 10:
        return None
    return float(np.mean([int(np.argmax(a) == np.argmax(b)) for a, b in zip(outs, refs)]))
