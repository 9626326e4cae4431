#include "env/host_info.h"

#include <cpuid.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <google/protobuf/stubs/common.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <onnx/common/version.h>

extern char** environ;

namespace ferry::env {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

struct Cpuid {
  unsigned a = 0, b = 0, c = 0, d = 0;
};
Cpuid cpuid(unsigned leaf, unsigned sub = 0) {
  Cpuid r;
  if (unsigned(__get_cpuid_max(leaf & 0x80000000u, nullptr)) < leaf) return r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}

uint64_t xgetbv0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

/// /proc/cpuinfo's "flags" of the first CPU; nullopt when unreadable.
std::optional<std::set<std::string>> proc_flags() {
  std::istringstream in(read_file("/proc/cpuinfo"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream words(line.substr(colon + 1));
    std::set<std::string> out;
    for (std::string w; words >> w;) out.insert(w);
    return out;
  }
  return std::nullopt;
}

/// Runs argv[0] (found on PATH) and returns its stdout; nullopt when it cannot
/// start, fails, or runs past `timeout_s` (then it is killed).
std::optional<std::string> run_capture(const std::vector<std::string>& args, double timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& s : copy) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return std::nullopt;
  }
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(timeout_s * 1000));
  bool timed_out = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, int(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char buf[4096];
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got <= 0) break;
    out.append(buf, size_t(got));
    if (out.size() > (1 << 20)) break;
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

}  // namespace

std::vector<IsaFlag> read_isa_flags() {
  const Cpuid l1 = cpuid(1), l7 = cpuid(7, 0), l71 = cpuid(7, 1);
  const bool osxsave = (l1.c >> 27) & 1;
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;
  const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;
  struct Def {
    const char* name;
    bool has;
    bool os;
    const char* why;
  };
  const Def defs[] = {
      {"sse4_2", bool((l1.c >> 20) & 1), true, "baseline x86-64-v2"},
      {"avx", bool((l1.c >> 28) & 1), os_avx, "256-bit vectors"},
      {"avx2", bool((l7.b >> 5) & 1), os_avx, "ferry's native f32 kernels (avx2 rows of kernels.def)"},
      {"fma", bool((l1.c >> 12) & 1), os_avx, "fused multiply-add in the avx2 kernels"},
      {"f16c", bool((l1.c >> 29) & 1), os_avx, "f16 <-> f32 conversion"},
      {"avx512f", bool((l7.b >> 16) & 1), os_avx512, "ferry's avx512 kernels, oneDNN avx512_core"},
      {"avx512dq", bool((l7.b >> 17) & 1), os_avx512, "oneDNN avx512_core"},
      {"avx512bw", bool((l7.b >> 30) & 1), os_avx512, "ferry's avx512 kernels, oneDNN avx512_core"},
      {"avx512vl", bool((l7.b >> 31) & 1), os_avx512, "oneDNN avx512_core"},
      {"avx512_vnni", bool((l7.c >> 11) & 1), os_avx512, "int8 convolutions and matmuls (oneDNN avx512_core_vnni)"},
      {"avx512_bf16", bool((l71.a >> 5) & 1), os_avx512, "bf16 dot products (oneDNN avx512_core_bf16)"},
      {"avx512_fp16", bool((l7.d >> 23) & 1), os_avx512, "f16 arithmetic (oneDNN 2.7+ avx512_core_fp16; 2.6 has no fp16 kernels)"},
      {"avx_vnni", bool((l71.a >> 4) & 1), os_avx, "int8 dot products on 256-bit vectors (oneDNN avx2_vnni)"},
      {"amx_tile", bool((l7.d >> 24) & 1), os_amx, "AMX tiles (oneDNN avx512_core_amx)"},
      {"amx_bf16", bool((l7.d >> 22) & 1), os_amx, "bf16 matmuls and convolutions on AMX"},
      {"amx_int8", bool((l7.d >> 25) & 1), os_amx, "int8 matmuls and convolutions on AMX"},
  };
  auto flags = proc_flags();
  std::vector<IsaFlag> out;
  for (const Def& d : defs) {
    IsaFlag f;
    f.name = d.name;
    f.why = d.why;
    f.cpuid = d.has;
    f.usable = d.has && d.os;
    if (flags) f.proc_cpuinfo = flags->count(d.name) != 0;
    out.push_back(f);
  }
  return out;
}

std::vector<GpuInfo> read_gpus(std::string* note) {
  std::vector<GpuInfo> gpus;
  auto smi = run_capture({"nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader,nounits"},
                         10.0);
  if (smi) {
    std::istringstream in(*smi);
    for (std::string line; std::getline(in, line);) {
      line = trim(line);
      if (line.empty()) continue;
      std::vector<std::string> parts;
      std::stringstream ss(line);
      for (std::string p; std::getline(ss, p, ',');) parts.push_back(trim(p));
      GpuInfo g;
      g.name = parts.size() > 0 ? parts[0] : line;
      g.driver = parts.size() > 1 ? parts[1] : "";
      if (parts.size() > 2) g.memory_mib = std::atoll(parts[2].c_str());
      if (g.memory_mib <= 0) g.memory_mib = -1;
      g.source = "nvidia-smi";
      gpus.push_back(g);
    }
    if (!gpus.empty()) return gpus;
  }
  std::error_code ec;
  const fs::path root = "/proc/driver/nvidia/gpus";
  if (fs::is_directory(root, ec)) {
    std::string driver = trim(read_file("/proc/driver/nvidia/version"));
    if (size_t nl = driver.find('\n'); nl != std::string::npos) driver = driver.substr(0, nl);
    for (const auto& e : fs::directory_iterator(root, ec)) {
      std::istringstream in(read_file((e.path() / "information").string()));
      GpuInfo g;
      for (std::string line; std::getline(in, line);)
        if (line.rfind("Model:", 0) == 0) g.name = trim(line.substr(6));
      if (g.name.empty()) g.name = "NVIDIA GPU " + e.path().filename().string();
      g.driver = driver;
      g.source = "/proc/driver/nvidia";
      gpus.push_back(g);
    }
  }
  if (gpus.empty() && note)
    *note = smi ? "nvidia-smi lists no GPU" : "no nvidia-smi on PATH and no /proc/driver/nvidia: no NVIDIA GPU";
  return gpus;
}

HostInfo read_host_info() {
  HostInfo h;
  {
    const Cpuid v = cpuid(0);
    char vendor[13] = {};
    std::memcpy(vendor, &v.b, 4);
    std::memcpy(vendor + 4, &v.d, 4);
    std::memcpy(vendor + 8, &v.c, 4);
    h.cpu_vendor = vendor;
    char brand[49] = {};
    if (unsigned(__get_cpuid_max(0x80000000u, nullptr)) >= 0x80000004u)
      for (unsigned i = 0; i < 3; ++i) {
        Cpuid r = cpuid(0x80000002u + i);
        std::memcpy(brand + 16 * i, &r, 16);
      }
    h.cpu_model = trim(brand);
  }
  // /proc/cpuinfo: model name (fallback), cores and sockets.
  {
    std::istringstream in(read_file("/proc/cpuinfo"));
    std::set<std::pair<std::string, std::string>> cores;
    std::set<std::string> sockets;
    std::string phys, line;
    while (std::getline(in, line)) {
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = trim(line.substr(0, colon)), val = trim(line.substr(colon + 1));
      if (key == "model name" && h.cpu_model.empty()) h.cpu_model = val;
      if (key == "physical id") {
        phys = val;
        sockets.insert(val);
      }
      if (key == "core id") cores.insert({phys, val});
    }
    h.physical_cores = int(cores.size());
    h.sockets = int(sockets.size());
  }
  h.logical_cpus = int(sysconf(_SC_NPROCESSORS_ONLN));
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) h.usable_cpus = CPU_COUNT(&set);
  {
    std::istringstream in(read_file("/sys/fs/cgroup/cpu.max"));
    std::string quota, period;
    if (in >> quota >> period && quota != "max") {
      double q = std::atof(quota.c_str()), p = std::atof(period.c_str());
      if (q > 0 && p > 0) h.cgroup_cpu_limit = q / p;
    }
    std::string mem = trim(read_file("/sys/fs/cgroup/memory.max"));
    if (!mem.empty() && mem != "max") h.cgroup_memory_limit_bytes = std::atoll(mem.c_str());
  }
  h.isa = read_isa_flags();
  {
    std::istringstream in(read_file("/proc/meminfo"));
    std::string key;
    int64_t kb = 0;
    std::string unit;
    while (in >> key >> kb) {
      std::getline(in, unit);
      if (key == "MemTotal:") h.mem_total_bytes = kb * 1024;
      if (key == "MemAvailable:") h.mem_available_bytes = kb * 1024;
    }
  }
  struct utsname u;
  if (uname(&u) == 0) {
    h.os = u.sysname;
    h.kernel = u.release;
    h.arch = u.machine;
  }
  {
    std::istringstream in(read_file("/etc/os-release"));
    for (std::string line; std::getline(in, line);)
      if (line.rfind("PRETTY_NAME=", 0) == 0) {
        std::string v = line.substr(12);
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        h.os = v;
      }
  }
  h.gpus = read_gpus(&h.gpu_note);
  return h;
}

std::string onednn_isa_name(int isa) {
  switch (isa) {
    case dnnl_cpu_isa_all: return "ALL";
    case dnnl_cpu_isa_sse41: return "SSE41";
    case dnnl_cpu_isa_avx: return "AVX";
    case dnnl_cpu_isa_avx2: return "AVX2";
    case dnnl_cpu_isa_avx2_vnni: return "AVX2_VNNI";
    case dnnl_cpu_isa_avx512_core: return "AVX512_CORE";
    case dnnl_cpu_isa_avx512_core_vnni: return "AVX512_CORE_VNNI";
    case dnnl_cpu_isa_avx512_core_bf16: return "AVX512_CORE_BF16";
    case dnnl_cpu_isa_avx512_core_amx: return "AVX512_CORE_AMX";
    default: break;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%x", unsigned(isa));
  return buf;
}

LibraryVersions read_library_versions() {
  LibraryVersions v;
  if (const dnnl_version_t* d = dnnl_version()) {
    v.onednn = std::to_string(d->major) + "." + std::to_string(d->minor) + "." + std::to_string(d->patch);
    if (d->hash && *d->hash && std::strcmp(d->hash, "N/A") != 0) v.onednn += std::string(" (") + d->hash + ")";
  }
  v.onednn_max_isa = onednn_isa_name(int(dnnl_get_effective_cpu_isa()));
  const int pb = GOOGLE_PROTOBUF_VERSION;
  v.protobuf = std::to_string(pb / 1000000) + "." + std::to_string(pb / 1000 % 1000) + "." + std::to_string(pb % 1000);
  v.onnx = ONNX_NAMESPACE::LAST_RELEASE_VERSION;
#if defined(__clang__)
  v.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  v.compiler = "gcc " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
               std::to_string(__GNUC_PATCHLEVEL__);
#endif
  v.openmp_max_threads = omp_get_max_threads();
  return v;
}

}  // namespace ferry::env
