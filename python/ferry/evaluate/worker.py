"""A Python candidate of `ferry evaluate` in a process of its own.

    python -m ferry.evaluate.worker SPEC.json

SPEC names what to run: {"kind": K, "path": ..., "threads": N, "inputs": [names in task order], ...}

    python       a module with a Model class (PyTorch nn.Module or any callable class):
                 torch.manual_seed(seed); model = Model(**init); outputs = model(*inputs)
                 ("class", "init", "seed"); torch tensors in and out for an nn.Module, numpy otherwise
    onnxruntime  an .onnx file in ONNX Runtime (all graph optimizations)
    openvino     an .onnx file in OpenVINO on the CPU
    tensorflow   a SavedModel directory, its signature ("signature", default serving_default)
    pt2          a torch.export archive (.pt2), run by torch.export.load(path).module()

It speaks the protocol of src/evaluate/worker.h on the original stdout
(stdout itself is pointed at stderr first, so prints cannot corrupt it):
a ready line, then run / time / quit requests.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path


class Candidate:
    """forward(arrays) -> list of numpy arrays; prepare(arrays) -> the native inputs; call(native)."""

    output_names: list

    def prepare(self, arrays):
        return arrays

    def call(self, native):
        raise NotImplementedError

    def to_numpy(self, outs):
        return outs


def _as_list(out):
    if isinstance(out, dict):
        return list(out.keys()), list(out.values())
    if isinstance(out, (list, tuple)):
        return None, list(out)
    return None, [out]


class PythonModule(Candidate):
    def __init__(self, spec):
        path = Path(spec["path"])
        sys.path.insert(0, str(path.parent))
        mod_spec = importlib.util.spec_from_file_location(f"ferry_candidate_{path.stem}", path)
        if mod_spec is None or mod_spec.loader is None:
            raise RuntimeError(f"{path}: cannot be imported as a Python module")
        module = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(module)
        cls = getattr(module, spec.get("class", "Model"), None)
        if cls is None:
            raise RuntimeError(f"{path} defines no class {spec.get('class', 'Model')!r}")
        self.torch = None
        if "torch" in sys.modules:
            import torch

            self.torch = torch
            if spec.get("threads"):
                torch.set_num_threads(int(spec["threads"]))
            torch.manual_seed(int(spec.get("seed", 0)))
        import numpy as np

        np.random.seed(int(spec.get("seed", 0)))
        self.model = cls(**(spec.get("init") or {}))
        self.is_torch = self.torch is not None and isinstance(self.model, self.torch.nn.Module)
        if self.is_torch:
            self.model.eval()
        self.input_names = spec["inputs"]
        self.output_names = None

    def prepare(self, arrays):
        xs = [arrays[n] for n in self.input_names]
        if self.is_torch:
            return [self.torch.from_numpy(x.copy()) for x in xs]
        return xs

    def call(self, native):
        if self.is_torch:
            with self.torch.inference_mode():
                return self.model(*native)
        return self.model(*native)

    def to_numpy(self, out):
        import numpy as np

        names, values = _as_list(out)
        self.output_names = names or [f"output_{i}" for i in range(len(values))]
        res = []
        for v in values:
            if self.torch is not None and isinstance(v, self.torch.Tensor):
                v = v.detach().cpu().numpy()
            res.append(np.asarray(v))
        return res


class OnnxRuntime(Candidate):
    def __init__(self, spec):
        import onnxruntime as ort

        so = ort.SessionOptions()
        if spec.get("threads"):
            so.intra_op_num_threads = int(spec["threads"])
            so.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(spec["path"], so, providers=["CPUExecutionProvider"])
        self.output_names = [o.name for o in self.sess.get_outputs()]
        self.runtime = f"onnxruntime {ort.__version__}"

    def call(self, native):
        return self.sess.run(None, native)


class OpenVino(Candidate):
    def __init__(self, spec):
        import openvino as ov

        core = ov.Core()
        # f32 as the other peers: on a CPU with AVX512_BF16 / AMX OpenVINO's default is bf16 (an error of
        # ~3e-4 against the f32 baseline on an AVX512_BF16 EPYC), which would score its accuracy, not ours.
        config = {"INFERENCE_PRECISION_HINT": "f32"}
        if spec.get("threads"):
            config["INFERENCE_NUM_THREADS"] = int(spec["threads"])
        self.compiled = core.compile_model(spec["path"], "CPU", config)
        self.output_names = [o.get_any_name() for o in self.compiled.outputs]
        self.request = self.compiled.create_infer_request()
        self.runtime = f"openvino {ov.__version__}"

    def call(self, native):
        res = self.request.infer(native)
        return [res[o] for o in self.compiled.outputs]


class TensorFlow(Candidate):
    def __init__(self, spec):
        import tensorflow as tf

        if spec.get("threads"):
            tf.config.threading.set_intra_op_parallelism_threads(int(spec["threads"]))
            tf.config.threading.set_inter_op_parallelism_threads(1)
        self.tf = tf
        loaded = tf.saved_model.load(spec["path"])
        sig = spec.get("signature") or "serving_default"
        if sig not in loaded.signatures:
            raise RuntimeError(f"{spec['path']}: no signature {sig!r} (has: {', '.join(loaded.signatures)})")
        self._loaded = loaded  # keeps the variables alive
        self.fn = loaded.signatures[sig]
        self.output_names = sorted(self.fn.structured_outputs)
        self.runtime = f"tensorflow {tf.__version__}"

    def prepare(self, arrays):
        return {k: self.tf.constant(v) for k, v in arrays.items()}

    def call(self, native):
        return self.fn(**native)

    def to_numpy(self, out):
        return [out[n].numpy() for n in self.output_names]


class TorchExport(Candidate):
    def __init__(self, spec):
        import torch

        if spec.get("threads"):
            torch.set_num_threads(int(spec["threads"]))
        self.torch = torch
        self.module = torch.export.load(spec["path"]).module()
        self.input_names = spec["inputs"]
        self.output_names = None
        self.runtime = f"torch {torch.__version__} (torch.export)"

    def prepare(self, arrays):
        return [self.torch.from_numpy(arrays[n].copy()) for n in self.input_names]

    def call(self, native):
        with self.torch.inference_mode():
            return self.module(*native)

    def to_numpy(self, out):
        names, values = _as_list(out)
        self.output_names = names or [f"output_{i}" for i in range(len(values))]
        return [v.detach().cpu().numpy() for v in values]


KINDS = {"python": PythonModule, "onnxruntime": OnnxRuntime, "openvino": OpenVino, "tensorflow": TensorFlow,
         "pt2": TorchExport}


def _load_npz(path):
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def serve(spec, reply):
    def send(obj):
        reply.write(json.dumps(obj) + "\n")
        reply.flush()

    kind = spec.get("kind")
    if kind not in KINDS:
        send({"ok": False, "error": f"unknown worker kind {kind!r}"})
        return 2
    try:
        cand = KINDS[kind](spec)
    except Exception as e:  # the candidate's own code: anything may come out of it
        send({"ok": False, "error": f"cannot load {spec.get('path')}: {type(e).__name__}: {e}"})
        return 2
    runtime = getattr(cand, "runtime", None)
    if runtime is None and getattr(cand, "torch", None) is not None:
        runtime = f"torch {cand.torch.__version__}" + ("" if getattr(cand, "is_torch", True) else " (not an nn.Module)")
    send({"ok": True, "ready": True, "runtime": runtime or f"python {sys.version.split()[0]}",
          "outputs": cand.output_names or []})
    import numpy as np

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            cmd = req["cmd"]
        except (ValueError, KeyError, TypeError):
            send({"ok": False, "error": f"malformed request: {line[:200]}"})
            continue
        if cmd == "quit":
            return 0
        try:
            native = cand.prepare(_load_npz(req["inputs"]))
            if cmd == "run":
                outs = cand.to_numpy(cand.call(native))
                out_dir = Path(req["out"])
                out_dir.mkdir(parents=True, exist_ok=True)
                files = []
                for i, (name, arr) in enumerate(zip(cand.output_names, outs)):
                    f = out_dir / f"{i}.npy"
                    np.save(f, np.asarray(arr), allow_pickle=False)
                    files.append({"name": name, "file": str(f)})
                send({"ok": True, "outputs": files})
            elif cmd == "time":
                for _ in range(int(req.get("warmup", 1))):
                    cand.call(native)
                ns = []
                for _ in range(int(req.get("iters", 10))):
                    t0 = time.perf_counter_ns()
                    cand.call(native)
                    ns.append(time.perf_counter_ns() - t0)
                send({"ok": True, "ns": ns})
            else:
                send({"ok": False, "error": f"unknown request {cmd!r}"})
        except Exception as e:
            send({"ok": False, "error": f"{type(e).__name__}: {e}"})
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    # The reply stream is the original stdout; print() and C libraries now write to stderr.
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if len(argv) != 1:
        reply.write(json.dumps({"ok": False, "error": "usage: python -m ferry.evaluate.worker SPEC.json"}) + "\n")
        return 2
    with open(argv[0], encoding="utf-8") as f:
        spec = json.load(f)
    return serve(spec, reply)


if __name__ == "__main__":
    sys.exit(main())
