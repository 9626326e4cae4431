"""The Python half of `ferry env`: which reference frameworks import here.

    python -m ferry.env_check [--out FILE]      # JSON to FILE (default stdout)

Each package is imported for real (a broken install fails here, not halfway
through `ferry validate` or `ferry evaluate`); the version comes from the
module or, failing that, the installed distribution. The C++ side
(tools/ferry/cmd_env.cc) turns this into ok / missing lines with the pip
command that fixes them. Exit status 0 unless the output cannot be written.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time

# (module, distribution to install, what ferry uses it for)
PACKAGES = [
    ("numpy", "numpy", "arrays for every bridge"),
    ("onnx", "onnx", "reading ONNX files in the bridges; ONNX export in the generators"),
    ("onnxruntime", "onnxruntime", "`ferry validate` reference for .onnx; `ferry evaluate` peer"),
    ("torch", "torch", "Python-module baselines of `ferry evaluate` (PyTorch peer); model generators"),
    ("tensorflow", "tensorflow-cpu", "`ferry validate` reference for TensorFlow models; SavedModel baselines"),
    ("openvino", "openvino", "`ferry evaluate` peer (optional)"),
    ("matplotlib", "matplotlib", "`ferry evaluate --plot`"),
]


def pinned_versions():
    """{distribution: version} from the requirements.txt next to the package, when in a source checkout."""
    from pathlib import Path

    req = Path(__file__).resolve().parent.parent.parent / "requirements.txt"
    pins = {}
    try:
        for line in req.read_text(encoding="utf-8").splitlines():
            line = line.split("#")[0].strip()
            if "==" in line:
                name, ver = line.split("==", 1)
                pins[name.strip().lower()] = ver.strip()
    except OSError:
        pass
    return pins


def check(module, dist):
    t0 = time.perf_counter()
    entry = {"module": module, "distribution": dist}
    try:
        mod = importlib.import_module(module)
    except Exception as e:  # ImportError, or anything a broken package raises on import
        entry.update(ok=False, error=f"{type(e).__name__}: {e}".splitlines()[0][:300])
    else:
        version = getattr(mod, "__version__", None)
        if not isinstance(version, str):
            try:
                from importlib.metadata import version as dist_version

                version = dist_version(dist)
            except Exception:
                version = None
        entry.update(ok=True, version=version)
    entry["import_s"] = round(time.perf_counter() - t0, 3)
    return entry


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ferry.env_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    args = ap.parse_args(argv)
    pins = pinned_versions()
    result = {
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "packages": [],
    }
    for module, dist, why in PACKAGES:
        entry = check(module, dist)
        entry["why"] = why
        pin = pins.get(dist.lower())
        entry["install"] = f"{sys.executable} -m pip install {dist}" + (f"=={pin}" if pin else "")
        result["packages"].append(entry)
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
