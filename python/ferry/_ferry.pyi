"""Type stubs for ferry._ferry, the compiled core (python/src/ferry_ext.cc)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import numpy.typing as npt

class TensorInfo:
    """A model input or output: name, dtype and (possibly symbolic) shape."""

    @property
    def name(self) -> str: ...
    @property
    def dtype(self) -> str:
        """ferry's dtype name: 'f32', 'f16', 'bf16', 'i64', 'bool', ..."""
    @property
    def numpy_dtype(self) -> np.dtype[Any] | None:
        """The numpy dtype of arrays for this tensor (ml_dtypes.bfloat16 for bf16; None without ml_dtypes)."""
    @property
    def shape(self) -> tuple[int | str | None, ...] | None:
        """int: static dim, str: symbolic dim ('N'), None: unknown dim; None when the rank is unknown."""
    def __eq__(self, other: object) -> bool: ...

class Session:
    """A compiled model; run() takes and returns numpy arrays."""

    @property
    def inputs(self) -> list[TensorInfo]: ...
    @property
    def outputs(self) -> list[TensorInfo]: ...
    @property
    def backend(self) -> str: ...
    @property
    def options(self) -> dict[str, Any]:
        """{'optimize': bool, 'backend': str, 'threads': int}"""
    @property
    def precision(self) -> dict[str, Any]:
        """Each floating node's precision and why: {'mode', 'summary', 'nodes': [{'node', 'op', 'precision', ...}]}"""
    def run(self, inputs: Mapping[str, npt.ArrayLike]) -> dict[str, np.ndarray]:
        """Runs the model; every input by name with the model's dtype; outputs in model order.

        Raises InvalidArgumentError (a ValueError) for a wrong name, dtype or shape."""

class Model:
    """A loaded model: its graph as imported, shapes inferred."""

    @property
    def path(self) -> str: ...
    @property
    def inputs(self) -> list[TensorInfo]: ...
    @property
    def outputs(self) -> list[TensorInfo]: ...
    def inspect(self, optimized: bool = False) -> dict[str, Any]:
        """What `ferry inspect --json` reports, as a dict."""
    def compile(
        self,
        *,
        optimize: bool = True,
        backend: str = "cpu",
        threads: int | None = 0,
        precision: str | None = None,
        keep_fp32: list[str] = ...,
        force: list[str] = ...,
    ) -> Session:
        """Compiles for a backend; an unknown option raises TypeError, an unknown backend InvalidArgumentError."""
    def save(self, path: str, optimize: bool = True) -> None:
        """Writes the model as ONNX (like `ferry convert`)."""

def load(path: str, external_data_dir: str = "", repair: bool = False, op_library: list[str] = ...) -> Model:
    """Loads a model; raises FileError, InvalidModelError or UnsupportedError (with .unsupported)."""

def inspect(path: str, optimized: bool = False, repair: bool = False, op_library: list[str] = ...) -> dict[str, Any]:
    """Model.inspect() for a file, also when it does not load ('error' then says why)."""

def backends() -> list[dict[str, str]]:
    """The backends compile() accepts: [{'name': ..., 'description': ...}]; the first is the default."""
