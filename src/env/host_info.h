// env/host_info.h — the facts `ferry env` reports about this machine: CPU,
// the instruction sets that matter for ferry's kernels, memory, OS, GPUs and
// the versions of the libraries ferry was built with.
//
// ISA flags come from CPUID, and count as usable only when the OS saves the
// registers they need (XGETBV: XCR0 bits 1-2 for AVX, 5-7 for AVX-512, 17-18
// for AMX tiles). Each flag also carries what /proc/cpuinfo says, under the
// kernel's name for it, so a disagreement is visible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferry::env {

struct IsaFlag {
  std::string name;                  ///< /proc/cpuinfo spelling: "avx2", "avx512_bf16", "amx_tile"
  std::string why;                   ///< what ferry uses it for
  bool cpuid = false;                ///< the CPU has it (CPUID)
  bool usable = false;               ///< the CPU has it and the OS enabled its registers
  std::optional<bool> proc_cpuinfo;  ///< listed in /proc/cpuinfo's flags (nullopt: no /proc/cpuinfo)
};

struct GpuInfo {
  std::string name;
  std::string driver;
  int64_t memory_mib = -1;  ///< -1 unknown
  std::string source;       ///< "nvidia-smi" or "/proc/driver/nvidia"
};

struct HostInfo {
  std::string cpu_vendor;   ///< CPUID vendor string, "GenuineIntel", "AuthenticAMD"
  std::string cpu_model;    ///< CPUID brand string (else /proc/cpuinfo "model name")
  int logical_cpus = 0;     ///< online logical CPUs
  int physical_cores = 0;   ///< distinct (physical id, core id) pairs in /proc/cpuinfo; 0 unknown
  int sockets = 0;          ///< distinct physical ids; 0 unknown
  int usable_cpus = 0;      ///< CPUs this process may run on (sched_getaffinity)
  std::optional<double> cgroup_cpu_limit;  ///< cgroup v2 cpu.max quota / period, when limited
  std::vector<IsaFlag> isa;
  int64_t mem_total_bytes = -1, mem_available_bytes = -1;  ///< /proc/meminfo
  std::optional<int64_t> cgroup_memory_limit_bytes;        ///< cgroup v2 memory.max, when limited
  std::string os;           ///< /etc/os-release PRETTY_NAME, else uname sysname
  std::string kernel;       ///< uname release
  std::string arch;         ///< uname machine
  std::vector<GpuInfo> gpus;
  std::string gpu_note;     ///< why no GPU was found, or what failed looking for one
};

/// Reads everything above. Never fails: what cannot be read stays empty/unknown.
HostInfo read_host_info();

/// The CPU's ISA flags only (CPUID + XGETBV + /proc/cpuinfo).
std::vector<IsaFlag> read_isa_flags();

/// GPUs: nvidia-smi on PATH (10 s timeout), else /proc/driver/nvidia/gpus/*/information.
std::vector<GpuInfo> read_gpus(std::string* note);

/// Versions ferry was built with and runs on.
struct LibraryVersions {
  std::string onednn;          ///< dnnl_version(): "2.6.3 (hash ...)"
  std::string onednn_max_isa;  ///< dnnl_get_effective_cpu_isa(), e.g. "avx2"
  std::string protobuf;        ///< the headers ferry was built with
  std::string onnx;            ///< libonnx's schema release
  std::string compiler;
  int openmp_max_threads = 0;
};
LibraryVersions read_library_versions();

/// oneDNN's cpu_isa value as the ONEDNN_MAX_CPU_ISA spelling ("AVX2", "AVX512_CORE_AMX"); "?" if unknown.
std::string onednn_isa_name(int isa);

}  // namespace ferry::env
