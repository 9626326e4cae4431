"""ferry: import, optimize, run and validate neural networks.

    import numpy as np, ferry
    model = ferry.load("resnet18.onnx")
    print(model.inputs)                        # [TensorInfo(name='input', dtype='f32', shape=[N,3,224,224])]
    session = model.compile()                  # optimize=True, backend="cpu"
    out = session.run({"input": np.zeros((1, 3, 224, 224), np.float32)})
    print(out["logits"].shape)

The model API (load, inspect, backends, Model, Session, TensorInfo) lives in
the compiled extension ferry._ferry and is imported on first use, so the pure
Python parts work without it: the framework bridges for `ferry validate`
(`python -m ferry.reference --help`) and the exceptions (ferry.errors).
See docs/python.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import (
    FerryError,
    FileError,
    InternalError,
    InvalidArgumentError,
    InvalidModelError,
    UnsupportedError,
)
from .op_library import register_ops

if TYPE_CHECKING:  # the real imports are lazy (__getattr__ below)
    from ._ferry import Model, Session, TensorInfo, backends, inspect, load  # noqa: F401

__version__ = "0.1.0"  # keep in step with pyproject.toml and project(VERSION) in CMakeLists.txt

_EXTENSION_NAMES = ("load", "inspect", "backends", "Model", "Session", "TensorInfo")

__all__ = [
    *_EXTENSION_NAMES,
    "from_torch",
    "register_ops",
    "FerryError",
    "FileError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidModelError",
    "UnsupportedError",
]


# Run from a source checkout (PYTHONPATH=python), the extension is found in
# the CMake build tree, build/python/ferry/ (scripts/setup.sh builds it there).
_SOURCE_BUILD = Path(__file__).resolve().parent.parent.parent / "build" / "python" / "ferry"
if (Path(__file__).resolve().parent.parent.parent / "CMakeLists.txt").is_file() and _SOURCE_BUILD.is_dir():
    __path__.append(str(_SOURCE_BUILD))


# Idle OpenMP threads spin briefly, then sleep (src/runtime/wait_policy.h): libgomp reads
# this once, when the extension loads it, and only if the user chose neither setting.
_SPIN_COUNT = "20000"  # keep in step with kSpinCount in src/runtime/wait_policy.h


def _set_default_wait_policy():
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = _SPIN_COUNT


def from_torch(module, example_args, dynamic_shapes=None, *, example_kwargs=None):
    """Exports `module` with torch.export and imports the program into ferry (no ONNX, no pickle).

        model = ferry.from_torch(net.eval(), (torch.randn(2, 3, 224, 224),),
                                 dynamic_shapes=({0: torch.export.Dim("batch")},))

    torch.export.export(module, example_args, kwargs=example_kwargs, dynamic_shapes=...)
    runs in this process; the program is saved pickle-free (the example inputs, the
    archive's one pickle, are dropped first) to a temporary .pt2 that ferry's C++
    importer reads, then removed. Put the module in eval mode first: ferry refuses
    training-mode batch norm and dropout. A dynamic dim needs an example of size >= 2
    (torch.export specialises sizes 0 and 1). Returns a Model, like ferry.load.
    """
    import tempfile

    import torch

    if not isinstance(example_args, tuple):
        example_args = (example_args,)
    with torch.no_grad():
        ep = torch.export.export(module, example_args, kwargs=example_kwargs, dynamic_shapes=dynamic_shapes)
    ep.example_inputs = None
    with tempfile.TemporaryDirectory(prefix="ferry_from_torch_") as tmp:
        path = os.path.join(tmp, "model.pt2")
        torch.export.save(ep, path)
        return __getattr__("load")(path)


def __getattr__(name: str):
    # PEP 562: the compiled extension loads on first use of the model API only.
    if name in _EXTENSION_NAMES:
        _set_default_wait_policy()
        try:
            from . import _ferry
        except ImportError as e:
            raise ImportError(
                f"ferry.{name} needs the compiled extension ferry._ferry, which is not importable here "
                f"({e}); install the package with scripts/setup.sh (or `pip install .` in the repository)"
            ) from e

        value = getattr(_ferry, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ferry' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXTENSION_NAMES))
