"""`ferry env`: the JSON fields are there and agree with what the machine says
itself (/proc/cpuinfo, /proc/meminfo, uname, the affinity mask), GPUs are found
through nvidia-smi, ONEDNN_MAX_CPU_ISA is reported and honoured, and the Python
frameworks are the ones this interpreter imports."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest


def env(ferry_bin, *args, extra_env=None, timeout=300):
    e = dict(os.environ, **(extra_env or {}))
    p = subprocess.run([str(ferry_bin), "env", *args], capture_output=True, text=True, timeout=timeout, env=e)
    assert p.returncode == 0, p.stderr
    return p


def proc_flags():
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    pytest.skip("no flags line in /proc/cpuinfo")


def test_json_is_consistent_with_the_machine(ferry_bin):
    j = json.loads(env(ferry_bin, "--json", "--no-python").stdout)
    assert j["ferry"]["version"] == "0.1.0" and j["ferry"]["kernels_isa"] in ("generic", "avx2", "avx512", "amx")
    cpu = j["cpu"]
    assert cpu["logical_cpus"] == os.cpu_count()
    assert cpu["usable_cpus"] == len(os.sched_getaffinity(0))
    model = [line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")]
    assert model and cpu["model"].split() == model[0].split()
    flags = proc_flags()
    want = {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
            "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8"}
    assert set(j["isa"]) == want
    for name, f in j["isa"].items():
        assert f["proc_cpuinfo"] == (name in flags), name
        assert f["usable"] == (name in flags), f"{name}: CPUID+XGETBV says {f['usable']}, /proc/cpuinfo disagrees"
    if j["ferry"]["kernels_isa"] == "avx2":
        assert j["isa"]["avx2"]["usable"] and j["isa"]["fma"]["usable"]
    meminfo = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in open("/proc/meminfo")}
    assert j["memory"]["total_bytes"] == meminfo["MemTotal"]
    assert 0 < j["memory"]["available_bytes"] <= j["memory"]["total_bytes"]
    assert j["os"]["kernel"] == os.uname().release and j["os"]["arch"] == os.uname().machine
    lib = j["libraries"]
    assert re.match(r"\d+\.\d+\.\d+", lib["onednn"]) and re.fullmatch(r"\d+\.\d+\.\d+", lib["protobuf"])
    assert lib["onednn_max_isa"] and lib["openmp_max_threads"] >= 1
    assert j["python"] == {"skipped": "--no-python"}
    statuses = {c["status"] for c in j["checks"]}
    assert statuses <= {"ok", "missing", "warn"}
    for c in j["checks"]:
        if c["status"] == "missing":
            assert c["fix"], c        # every missing check says what to do


def test_onednn_max_cpu_isa_is_reported_and_honoured(ferry_bin):
    j = json.loads(env(ferry_bin, "--json", "--no-python", extra_env={"ONEDNN_MAX_CPU_ISA": "AVX"}).stdout)
    assert j["libraries"]["ONEDNN_MAX_CPU_ISA"] == "AVX"
    assert j["libraries"]["onednn_max_isa"] == "AVX"


def test_gpu_from_nvidia_smi(ferry_bin, tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA H200, 550.54.15, 143771'\necho 'NVIDIA H200, 550.54.15, 143771'\n")
    smi.chmod(0o755)
    path = f"{tmp_path}:{os.environ.get('PATH', '')}"
    j = json.loads(env(ferry_bin, "--json", "--no-python", extra_env={"PATH": path}).stdout)
    assert j["gpus"] == [{"name": "NVIDIA H200", "driver": "550.54.15", "memory_mib": 143771, "source": "nvidia-smi"}] * 2
    gpu_checks = [c for c in j["checks"] if c["section"] == "gpu"]
    assert [c["status"] for c in gpu_checks] == ["ok", "ok"]


def test_no_gpu_is_missing_with_a_note(ferry_bin, tmp_path):
    if os.path.exists("/proc/driver/nvidia"):
        pytest.skip("this machine has an NVIDIA driver")
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nexit 9\n")   # a broken nvidia-smi is not a GPU
    smi.chmod(0o755)
    j = json.loads(env(ferry_bin, "--json", "--no-python",
                       extra_env={"PATH": f"{tmp_path}:{os.environ.get('PATH', '')}"}).stdout)
    assert j["gpus"] == []
    gpu = [c for c in j["checks"] if c["section"] == "gpu"]
    assert gpu[0]["status"] == "missing" and "no NVIDIA GPU" in gpu[0]["detail"]


def test_frameworks_through_the_python_bridge(ferry_bin):
    import numpy

    j = json.loads(env(ferry_bin, "--json").stdout)
    pkgs = {p["module"]: p for p in j["python"]["packages"]}
    assert set(pkgs) >= {"numpy", "onnx", "onnxruntime", "torch", "tensorflow", "openvino", "matplotlib"}
    assert pkgs["numpy"]["ok"] and pkgs["numpy"]["version"] == numpy.__version__
    for p in pkgs.values():
        assert p["ok"] or (p["error"] and "pip install" in p["install"])
    text = env(ferry_bin, "--no-python").stdout
    assert re.search(r"^  (ok|missing) +avx2 ", text, re.M)
    assert "ok, " in text.splitlines()[-1]
