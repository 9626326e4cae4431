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


def bf16_attention_kernel(environ=os.environ):
    """The kernel the CPU target's rule (backends/cpu/cpu_target.cc cpu_bf16_attention_kernel) runs
    bf16 Attention nodes on under `environ`'s caps, read here from /proc/cpuinfo, or None (fp32):
    attention_bf16__amx with amx_bf16 (and the dispatch cap at amx; the OS is assumed to grant the
    tile state, as Linux >= 5.16 does), attention_bf16__avx512bf16 on AMD family 0x1A (Zen 5) with
    avx512_bf16 (cap at avx512 or above)."""
    try:
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return None
    fields = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in first.splitlines() if ":" in line)}
    flags = fields.get("flags", "").split()
    # The caps: ferry's dispatch below avx512, or oneDNN's below AVX512_CORE_BF16 (bf16 then is
    # emulated altogether: cpu_target.cc's lowered_support).
    ferry_cap = environ.get("FERRY_CPU_MAX_ISA", "").strip().lower()
    dnnl_cap = environ.get("ONEDNN_MAX_CPU_ISA", environ.get("DNNL_MAX_CPU_ISA", "")).strip().upper()
    if ferry_cap in ("reference", "generic", "avx2") or (dnnl_cap and "BF16" not in dnnl_cap and "AMX" not in dnnl_cap
                                                         and "FP16" not in dnnl_cap and dnnl_cap != "ALL"):
        return None
    if "avx512_bf16" not in flags:
        return None
    if ferry_cap != "avx512" and "amx_bf16" in flags and "amx_tile" in flags:
        return "attention_bf16__amx"
    if fields.get("vendor_id") == "AuthenticAMD" and fields.get("cpu family") == "26":
        return "attention_bf16__avx512bf16"
    return None


@pytest.fixture(scope="session")
def bf16_attention_cpu():
    """The bf16 Attention kernel on this host under this environment's caps (bf16_attention_kernel),
    or None where bf16 Attention is emulated (the fp32 kernel)."""
    return bf16_attention_kernel()


@pytest.fixture(scope="session")
def bf16_attention_kernel_under():
    """bf16_attention_kernel itself: the expected kernel under other caps (an environment dict)."""
    return bf16_attention_kernel
