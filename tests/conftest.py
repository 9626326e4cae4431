"""Fixtures every suite shares: `ferry_api`, the installed ferry package with its compiled
extension, `ferry_cli`, the built `ferry` binary, and `onnx_mod` / `ort`, onnx and ONNX
Runtime (each a failure under CI=true when it is missing, else a skip)."""

import importlib
import os
from pathlib import Path

import pytest


def _unavailable(what):
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{what} (CI=true: missing prerequisites are failures)", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="session")
def ferry_api():
    """The installed `ferry` package, with ferry._ferry importable."""
    try:
        import ferry
        import ferry._ferry  # noqa: F401
    except ImportError as e:
        _unavailable(f"the ferry Python package is not installed with its extension ({e}); run scripts/setup.sh")
    return ferry


@pytest.fixture(scope="session")
def ferry_cli():
    """The `ferry` binary: FERRY_BIN (relative paths from the repository root), else build/ferry."""
    repo = Path(__file__).resolve().parents[1]
    path = Path(os.environ.get("FERRY_BIN", repo / "build" / "ferry"))
    if not path.is_absolute():
        path = repo / path
    if not (path.is_file() and os.access(path, os.X_OK)):
        _unavailable(f"ferry binary not found at {path} (build it, or set FERRY_BIN)")
    return path


def _module(name):
    try:
        return importlib.import_module(name)
    except ImportError as e:
        _unavailable(f"{name} not importable: {e}")


@pytest.fixture(scope="session")
def onnx_mod():
    return _module("onnx")


@pytest.fixture(scope="session")
def ort():
    return _module("onnxruntime")


@pytest.fixture(scope="session")
def bf16_attention_cpu():
    """Whether the CPU target's rule (backends/cpu/cpu_target.cc) runs bf16 Attention nodes on the
    bf16 kernel: AMD family 0x1A (Zen 5) with avx512_bf16, read here from /proc/cpuinfo."""
    try:
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return False
    fields = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in first.splitlines() if ":" in line)}
    # The caps: ferry's dispatch below avx512, or oneDNN's below AVX512_CORE_BF16 (bf16 then is
    # emulated altogether: cpu_target.cc's lowered_support).
    ferry_cap = os.environ.get("FERRY_CPU_MAX_ISA", "").strip().lower()
    dnnl_cap = os.environ.get("ONEDNN_MAX_CPU_ISA", os.environ.get("DNNL_MAX_CPU_ISA", "")).strip().upper()
    if ferry_cap in ("reference", "generic", "avx2") or (dnnl_cap and "BF16" not in dnnl_cap and "AMX" not in dnnl_cap
                                                         and "FP16" not in dnnl_cap and dnnl_cap != "ALL"):
        return False
    return (fields.get("vendor_id") == "AuthenticAMD" and fields.get("cpu family") == "26"
            and "avx512_bf16" in fields.get("flags", "").split())
