"""ferry's exceptions: one class per ferry status code, all subclasses of FerryError.

The compiled core reports failures as a status (a code and a message with a
context chain, e.g. "model 'm.onnx': importing node 'conv3' (Conv): pads has
3 values, expected 4"); the Python package raises the matching class with that
message unchanged:

    status code        exception               also a
    invalid argument   InvalidArgumentError    ValueError   (wrong input name, dtype, shape, option value)
    invalid model      InvalidModelError                    (the model file is malformed)
    unsupported        UnsupportedError                     (valid, but ferry does not implement it)
    i/o error          FileError               OSError      (a file cannot be read or written)
    internal error     InternalError           RuntimeError (a ferry bug)

Pure Python, so `except ferry.FerryError` works without the compiled extension.
"""

from __future__ import annotations


class FerryError(Exception):
    """A failure reported by ferry. `code` is the status code ("invalid model", ...)."""

    code = "error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(FerryError, ValueError):
    """Bad user input: an input's name, dtype or shape, an option value."""

    code = "invalid argument"


class InvalidModelError(FerryError):
    """The model file is malformed or contradicts itself."""

    code = "invalid model"


class UnsupportedError(FerryError):
    """A valid model that uses something ferry does not implement.

    `unsupported` lists every unsupported node when the import found them (dicts with
    node_name, op_type, domain, opset, reason, proposed_repair); empty otherwise."""

    code = "unsupported"

    def __init__(self, message: str, unsupported: list | None = None):
        super().__init__(message)
        self.unsupported = list(unsupported or [])


class FileError(FerryError, OSError):
    """A file could not be read or written."""

    code = "i/o error"

    def __init__(self, message: str):
        OSError.__init__(self, message)
        self.message = message


class InternalError(FerryError, RuntimeError):
    """A ferry bug surfaced as an error; please report it with the model."""

    code = "internal error"


_BY_CODE = {cls.code: cls for cls in (InvalidArgumentError, InvalidModelError, UnsupportedError, FileError,
                                      InternalError)}


def from_status(code: str, message: str, details=None) -> FerryError:
    """The exception for a ferry status (used by the compiled extension)."""
    cls = _BY_CODE.get(code, FerryError)
    if cls is UnsupportedError:
        return UnsupportedError(message, details)
    return cls(message)
