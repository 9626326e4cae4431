"""Realistic inputs for the real-model group, built from a manifest entry's `[model.inputs.NAME]` tables.

Each input names a generator (`gen`) and its parameters; every generator is deterministic for a
seed (derived from the model id and input name), so ferry and ONNX Runtime see the same arrays.
The generators stand in for what each package's own code feeds its model (see the `why` of each
input in manifest.toml):

| gen | array |
| --- | --- |
| image | a synthetic picture in [0, 255] (smooth background, blocks, dark strokes like text, noise), then `(x * scale - mean) / std` per channel; `layout` NCHW (default) or NHWC; `channels` 1 = grey |
| audio | a synthetic voice-like waveform (a gliding harmonic tone in syllable-like bursts plus noise, peak ~0.6) times `scale`; with `frame`/`context` the audio is cut into frames of `frame` new samples each preceded by the `context` samples before it (how the Silero VAD wrappers call their models) |
| whisper_logmel | Whisper log-mel features (80 bins, hop 160, n_fft 400 at 16 kHz, log10, clamp to max - 8, (x + 4) / 4) of that audio, the feature extractor Smart Turn v3 uses |
| uniform / normal | `low`..`high` / N(`mean`, `std`) |
| zeros / const | zeros / `value` everywhere (a rank-0 shape `[]` gives a scalar) |
| one_hot | one-hot rows along the last axis for `ids`, the rest of the rows `pad_id` |
| ids | the integers `values`, padded with `pad` to the shape |
| from | output `output` of model `model` (another manifest entry, run in ONNX Runtime on its own inputs), then `reshape`, `* scale + offset` |

A model with `recurrent = [[state_in, state_out], ...]` is first run `warm_steps` times in ONNX
Runtime on fresh audio (seed + k), feeding each state output back, so the compared run starts from
a mid-stream state rather than the all-zero reset state.

    from inputs import build_inputs
    feeds = build_inputs(manifest_entry, models_by_id, model_path_of)   # {input name: np.ndarray}
"""
from __future__ import annotations

import hashlib

import numpy as np


def seed_of(*parts) -> int:
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:8], "little")


def synthetic_image(h, w, channels, rng):
    """A [h, w, channels] float picture in [0, 255]: gradient, blocks, text-like strokes, noise."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.empty((h, w, channels))
    for c in range(channels):
        a, b = rng.uniform(-1, 1, 2)
        img[..., c] = 150 + 60 * np.sin(a * xx / max(w, 1) * 3 + b * yy / max(h, 1) * 3 + c)
    for _ in range(6):  # coloured blocks
        y0, x0 = rng.integers(0, h), rng.integers(0, w)
        img[y0:y0 + rng.integers(h // 8 + 1, h // 2 + 2), x0:x0 + rng.integers(w // 8 + 1, w // 2 + 2)] = \
            rng.uniform(40, 250, channels)
    for _ in range(max(1, h // 60)):  # lines of dark glyph-like strokes on a light band (text)
        hi = h * 3 // 4 if h <= 96 else h // 6  # a text-line crop is mostly text; a page has lines
        th = int(rng.integers(max(6, hi // 2), max(8, hi) + 1))  # text height
        y0, x0 = int(rng.integers(0, max(1, h - th))), int(rng.integers(0, max(1, w // 3)))
        x1 = min(w, x0 + int(rng.integers(w // 3, w + 1)))
        img[max(0, y0 - th // 4):y0 + th + th // 4, x0:x1] = rng.uniform(200, 250)
        sw = max(1, th // 7)  # stroke width
        for gx in range(x0, x1 - th // 2, int(th * 0.7)):
            ink = rng.uniform(0, 60)
            for _ in range(3):  # three strokes per glyph: vertical, horizontal or diagonal
                kind = rng.integers(0, 3)
                a = int(rng.integers(0, max(1, th // 2)))
                if kind == 0:
                    img[y0:y0 + th, gx + a:gx + a + sw] = ink
                elif kind == 1:
                    yy = y0 + int(rng.integers(0, th))
                    img[yy:yy + sw, gx:gx + th // 2] = ink
                else:
                    for k in range(th):
                        xx = gx + k * (th // 2) // th
                        img[y0 + k, xx:xx + sw] = ink
    img += rng.normal(0, 6, img.shape)
    return np.clip(img, 0, 255)


def synthetic_audio(n, rate, rng):
    """n samples of a voice-like signal in about [-0.6, 0.6] at `rate` Hz."""
    t = np.arange(n) / rate
    f0 = 140 + 40 * np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 6))  # gliding pitch
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voice = sum(np.sin(k * phase) / k for k in range(1, 12))
    envelope = np.clip(np.sin(2 * np.pi * 3.1 * t + rng.uniform(0, 6)), 0, None) ** 0.5  # syllables
    x = 0.35 * voice * envelope + 0.02 * rng.normal(size=n)
    return x / max(1e-9, np.max(np.abs(x))) * 0.6


def whisper_logmel(audio, n_mels=80, n_fft=400, hop=160, rate=16000):
    """Whisper-style log-mel features [n_mels, frames] (HTK mel filters; the normalisation Whisper uses)."""
    pad = n_fft // 2
    x = np.pad(audio, (pad, pad), mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft)[::hop][:-1]
    power = np.abs(np.fft.rfft(frames * np.hanning(n_fft + 1)[:-1], axis=-1)) ** 2
    mel = lambda f: 2595 * np.log10(1 + f / 700)
    edges = 700 * (10 ** (np.linspace(mel(0), mel(rate / 2), n_mels + 2) / 2595) - 1)
    freqs = np.linspace(0, rate / 2, n_fft // 2 + 1)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    fb = np.clip(np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)), 0, None)
    spec = np.log10(np.maximum(fb @ power.T, 1e-10))
    spec = np.maximum(spec, spec.max() - 8.0)
    return (spec + 4.0) / 4.0


def _audio_array(spec, shape, rng):
    rate = spec.get("rate", 16000)
    scale = spec.get("scale", 1.0)
    frame, context = spec.get("frame"), spec.get("context", 0)
    if frame:  # [n_frames, context + frame]: each frame preceded by the samples before it (zeros at the start)
        n_frames = shape[0]
        audio = synthetic_audio(n_frames * frame, rate, rng)
        padded = np.concatenate([np.zeros(context), audio])
        rows = [padded[i * frame:i * frame + context + frame] for i in range(n_frames)]
        return np.stack(rows) * scale
    return synthetic_audio(int(np.prod(shape)), rate, rng).reshape(shape) * scale


def generate(spec, shape, dtype, seed, run_other=None):
    rng = np.random.default_rng(seed)
    gen = spec["gen"]
    if gen == "image":
        layout = spec.get("layout", "NCHW")
        n, c, h, w = shape if layout == "NCHW" else (shape[0], shape[3], shape[1], shape[2])
        imgs = np.stack([synthetic_image(h, w, c, rng) for _ in range(n)])  # NHWC
        imgs = (imgs * spec.get("scale", 1.0) - np.asarray(spec.get("mean", 0.0))) / np.asarray(spec.get("std", 1.0))
        a = imgs if layout == "NHWC" else imgs.transpose(0, 3, 1, 2)
    elif gen == "audio":
        a = _audio_array(spec, shape, rng)
    elif gen == "whisper_logmel":
        n_frames = shape[-1]
        audio = synthetic_audio(n_frames * 160, 16000, rng)
        a = np.broadcast_to(whisper_logmel(audio, n_mels=shape[-2])[:, :n_frames], shape)
    elif gen == "uniform":
        a = rng.uniform(spec["low"], spec["high"], shape)
    elif gen == "normal":
        a = rng.normal(spec.get("mean", 0.0), spec.get("std", 1.0), shape)
    elif gen == "zeros":
        a = np.zeros(shape)
    elif gen == "const":
        a = np.full(shape, spec["value"])
    elif gen == "one_hot":
        depth = shape[-1]
        rows = int(np.prod(shape[:-1]))
        ids = list(spec["ids"]) + [spec.get("pad_id", 0)] * (rows - len(spec["ids"]))
        a = np.eye(depth)[ids[:rows]].reshape(shape)
    elif gen == "ids":
        flat = list(spec["values"]) + [spec.get("pad", 0)] * (int(np.prod(shape)) - len(spec["values"]))
        a = np.asarray(flat[:int(np.prod(shape))]).reshape(shape)
    elif gen == "from":
        a = run_other(spec["model"], spec["output"])
        if "reshape" in spec:
            a = a.reshape(spec["reshape"])
        a = a * spec.get("scale", 1.0) + spec.get("offset", 0.0)
    else:
        raise ValueError(f"unknown input generator {gen!r}")
    a = np.asarray(a).astype(dtype, order="C")  # (ascontiguousarray would make a scalar 1-d)
    if list(a.shape) != list(shape):
        raise ValueError(f"generator {gen!r} made shape {list(a.shape)}, the manifest says {list(shape)}")
    return a


def build_inputs(entry, models_by_id, path_of, seed_offset=0, _depth=0):
    """{input name: array} for one manifest entry; `path_of(entry)` is the .onnx to run for `from` inputs."""
    if _depth > 4:
        raise ValueError("`from` inputs nest too deep")

    def run_other(model_id, output):
        other = models_by_id[model_id]
        feeds = build_inputs(other, models_by_id, path_of, 0, _depth + 1)
        return ort_run(path_of(other), feeds)[output]

    feeds = {}
    for name, spec in entry["inputs"].items():
        feeds[name] = generate(spec, spec["shape"], spec.get("dtype", "float32"),
                               seed_of(entry["id"], name, seed_offset), run_other)
    recurrent = entry.get("recurrent", [])
    for k in range(entry.get("warm_steps", 0) if recurrent else 0):
        step = {n: generate(s, s["shape"], s.get("dtype", "float32"), seed_of(entry["id"], n, seed_offset, "warm", k),
                            run_other) if n not in {i for i, _ in recurrent} else feeds[n]
                for n, s in entry["inputs"].items()}
        out = ort_run(path_of(entry), step)
        for state_in, state_out in recurrent:
            feeds[state_in] = out[state_out].astype(feeds[state_in].dtype, order="C")
    return feeds


_SESSIONS = {}


def ort_session(path, threads=1, optimize=False, spin=True):
    """An ONNX Runtime CPU session; the reference one runs with graph optimizations disabled."""
    import onnxruntime as ort

    key = (str(path), threads, optimize, spin)
    if key not in _SESSIONS:
        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        o.inter_op_num_threads = 1
        o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        o.log_severity_level = 3
        if not optimize:
            o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        if not spin:
            o.add_session_config_entry("session.intra_op.allow_spinning", "0")
        _SESSIONS[key] = ort.InferenceSession(str(path), o, providers=["CPUExecutionProvider"])
    return _SESSIONS[key]


def ort_run(path, feeds):
    """{output name: array} from ONNX Runtime (graph optimizations disabled: the reference)."""
    sess = ort_session(path)
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))
