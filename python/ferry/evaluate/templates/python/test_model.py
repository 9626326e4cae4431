"""The Python submission's own test (run by `ferry evaluate` with pytest)."""

import importlib.util
from pathlib import Path


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_model_class_exists():
    model = load(Path(__file__).with_name("model.py"), "submission_model")
    assert callable(getattr(model, "Model", None))
