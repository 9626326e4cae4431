"""What oneDNN may use on this host: the CPU's flags capped by ONEDNN_MAX_CPU_ISA.

ferry's int8 steps ask oneDNN for its effective ISA (src/precision/int8_weight_grid.cc), so a
test that predicts which nodes run int8 must read the same cap: a VNNI host run under
ONEDNN_MAX_CPU_ISA=AVX512_CORE or AVX2 has no VNNI as far as oneDNN (and ferry) are concerned.
"""
import os
from pathlib import Path

# oneDNN's ISA names (dnnl_cpu_isa_t, ONEDNN_MAX_CPU_ISA) that include a VNNI dot product.
_VNNI_CAPS = {"AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE_VNNI", "AVX512_CORE_BF16", "AVX512_CORE_FP16",
              "AVX512_CORE_AMX", "AVX512_CORE_AMX_FP16", "ALL"}


def cpu_flags():
    """The flags of /proc/cpuinfo's first processor (empty where it cannot be read)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def onednn_has_vnni():
    """True when the CPU has VNNI (AVX512-VNNI, AVX-VNNI or AMX-INT8) and ONEDNN_MAX_CPU_ISA allows it."""
    flags = cpu_flags()
    if not flags & {"avx512_vnni", "avx_vnni", "amx_int8"}:
        return False
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", os.environ.get("DNNL_MAX_CPU_ISA", "")).strip().upper()
    if not cap:
        return True
    if cap == "AVX2_VNNI":
        return "avx_vnni" in flags
    return cap in _VNNI_CAPS


def ort_int8_saturates():
    """ONNX Runtime's u8 x s8 kernels pair products in int16 (vpmaddubsw) where the CPU has no VNNI.

    ORT reads the CPU itself: ONEDNN_MAX_CPU_ISA does not cap it.
    """
    return not cpu_flags() & {"avx512_vnni", "avx_vnni", "amx_int8"}


def ferry_dispatch_has_avx512(environ=os.environ):
    """True when ferry's own kernels run their AVX-512 variants: the CPU has AVX-512 (F, BW) and
    FERRY_CPU_MAX_ISA (ferry's dispatch cap; oneDNN's does not apply to them) allows avx512."""
    cap = environ.get("FERRY_CPU_MAX_ISA", "").strip().lower()
    return {"avx512f", "avx512bw"} <= cpu_flags() and cap not in ("reference", "generic", "avx2")
