// ferry env [--json] [--no-python]
// What this machine offers ferry: CPU, ISA flags, memory, OS, library
// versions, oneDNN's ISA, the reference frameworks (through the Python
// bridge: python -m ferry.env_check) and GPUs. Each check is ok, missing or
// warn, with what to do about it. Exit 0 (the report is the result), 1 usage.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli_common.h"
#include "ferry/model.h"
#include "env/host_info.h"
#include "ops/registry.h"
#include "validate/python_bridge.h"

namespace ferry::cli {
namespace {

namespace fs = std::filesystem;

struct EnvOptions {
  bool json = false;
  bool no_python = false;
};

struct Check {
  std::string section, name, status, detail, fix;  // status: ok | missing | warn
};

std::string env_var(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

/// Runs python -m ferry.env_check; the parsed JSON, or an object {"error": ...}.
Json python_frameworks() {
  auto bridge = validate::find_python_bridge();
  if (!bridge.ok()) return Json{{"error", bridge.status().message()}};
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec) / ("ferry-env-" + std::to_string(::getpid()));
  fs::create_directories(dir, ec);
  const std::string out = (dir / "env.json").string(), log = (dir / "log.txt").string();
  auto code = validate::spawn_python_module(*bridge, "ferry.env_check", {"--out", out}, log);
  Json j;
  if (!code.ok()) {
    j = Json{{"error", code.status().message()}};
  } else {
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    j = Json::parse(ss.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      std::ifstream lf(log);
      std::stringstream ls;
      ls << lf.rdbuf();
      std::string tail = ls.str();
      if (tail.size() > 1500) tail = "..." + tail.substr(tail.size() - 1500);
      j = Json{{"error", bridge->python + " -m ferry.env_check failed (exit status " + std::to_string(*code) +
                             "): " + tail}};
    }
  }
  j["interpreter"] = bridge->python;
  j["found_via"] = bridge->found_via;
  fs::remove_all(dir, ec);
  return j;
}

int run_env(const EnvOptions& o) {
  const env::HostInfo h = env::read_host_info();
  const env::LibraryVersions lib = env::read_library_versions();
  std::vector<Check> checks;
  auto add = [&](std::string section, std::string name, std::string status, std::string detail, std::string fix = "") {
    checks.push_back({std::move(section), std::move(name), std::move(status), std::move(detail), std::move(fix)});
  };

  // --- machine ---
  std::string cpu = h.cpu_model.empty() ? "unknown CPU" : h.cpu_model;
  cpu += " (" + h.cpu_vendor + "), " + std::to_string(h.logical_cpus) + " logical CPUs";
  if (h.physical_cores) cpu += ", " + std::to_string(h.physical_cores) + " cores";
  if (h.sockets) cpu += ", " + std::to_string(h.sockets) + (h.sockets == 1 ? " socket" : " sockets");
  cpu += "; this process may use " + std::to_string(h.usable_cpus);
  if (h.cgroup_cpu_limit) {
    std::ostringstream q;
    q.precision(3);
    q << *h.cgroup_cpu_limit;
    cpu += " (cgroup quota " + q.str() + " CPUs)";
  }
  add("machine", "cpu", h.arch == "x86_64" ? "ok" : "warn", cpu,
      h.arch == "x86_64" ? "" : "ferry's CPU backend targets x86-64; other CPUs run the reference kernels only");
  std::string mem = h.mem_total_bytes > 0 ? human_bytes(h.mem_total_bytes) + " total" : "unknown";
  if (h.mem_available_bytes > 0) mem += ", " + human_bytes(h.mem_available_bytes) + " available";
  if (h.cgroup_memory_limit_bytes) mem += ", cgroup limit " + human_bytes(*h.cgroup_memory_limit_bytes);
  add("machine", "memory", h.mem_total_bytes > 0 ? "ok" : "warn", mem);
  add("machine", "os", "ok", h.os + ", kernel " + h.kernel + ", " + h.arch);

  // --- ISA ---
  for (const env::IsaFlag& f : h.isa) {
    std::string detail = f.why;
    if (f.cpuid && !f.usable) detail += "; the CPU has it but the OS does not enable its registers";
    if (f.proc_cpuinfo && *f.proc_cpuinfo != f.usable)
      detail += std::string("; /proc/cpuinfo ") + (*f.proc_cpuinfo ? "lists" : "does not list") + " it";
    std::string fix;
    if (!f.usable) {
      if (f.name.rfind("avx512", 0) == 0)
        fix = "ferry runs its avx2 kernels instead; AVX-512 needs an Intel Skylake-SP or later / AMD Zen 4 CPU";
      else if (f.name.rfind("amx", 0) == 0)
        fix = "bf16/int8 run without AMX; AMX needs an Intel Sapphire Rapids or later CPU (and Linux >= 5.16)";
      else if (f.name == "avx2" || f.name == "fma")
        fix = "ferry falls back to its generic and reference kernels (slow)";
      else
        fix = "not used by ferry's fast paths on this CPU";
    }
    add("isa", f.name, f.usable ? "ok" : "missing", detail, fix);
  }
  add("isa", "ferry kernels", "ok", std::string("ferry selects its ") + isa_name(host_isa()) + " kernels");
  // What --precision can use here (docs/precision.md): emulated = no speedup, `auto` stays fp32.
  const auto precisions = backend_precisions({});
  if (precisions.ok())
    for (const PrecisionSupport& p : precisions->offered)
      add("isa", precision_name(p.dtype), p.exec == PrecisionExec::accelerated ? "ok" : "warn",
          std::string("--precision ") + precision_name(p.dtype) + " " + precision_exec_name(p.exec) + ": " + p.why,
          p.exec == PrecisionExec::accelerated
              ? ""
              : std::string("--precision auto does not pick ") + precision_name(p.dtype) + " here; --precision " +
                    precision_name(p.dtype) + " runs emulated (no speedup)");
  // --fp32-math bf16x3 (docs/precision.md "fp32 math"), as the CPU target says.
  if (precisions.ok() && !precisions->fp32_bf16x3.empty()) add("isa", "fp32 math", "ok", precisions->fp32_bf16x3);

  // --- libraries ---
  add("libraries", "ferry", "ok", std::string("ferry ") + kVersion + ", built with " + lib.compiler);
  const std::string max_isa_env = env_var("ONEDNN_MAX_CPU_ISA"), dnnl_env = env_var("DNNL_MAX_CPU_ISA");
  std::string dnnl = "oneDNN " + lib.onednn + ", effective max ISA " + lib.onednn_max_isa;
  if (!max_isa_env.empty()) dnnl += ", ONEDNN_MAX_CPU_ISA=" + max_isa_env;
  if (!dnnl_env.empty()) dnnl += ", DNNL_MAX_CPU_ISA=" + dnnl_env;
  if (max_isa_env.empty() && dnnl_env.empty()) dnnl += " (ONEDNN_MAX_CPU_ISA unset)";
  add("libraries", "onednn", lib.onednn.empty() ? "missing" : "ok", dnnl,
      lib.onednn.empty() ? "install libdnnl-dev (scripts/setup.sh)" : "");
  add("libraries", "protobuf", "ok", "protobuf " + lib.protobuf + " (headers ferry was built with)");
  add("libraries", "onnx", "ok", "ONNX schema " + lib.onnx + " (libonnx-dev)");
  const std::string omp = env_var("OMP_NUM_THREADS");
  add("libraries", "openmp", "ok",
      std::to_string(lib.openmp_max_threads) + " threads" + (omp.empty() ? "" : " (OMP_NUM_THREADS=" + omp + ")"));

  // --- Python frameworks ---
  Json py = o.no_python ? Json{{"skipped", "--no-python"}} : python_frameworks();
  if (!o.no_python) {
    if (py.contains("error")) {
      add("python", "interpreter", "missing", py["error"].get<std::string>(),
          "run scripts/setup.sh, or set FERRY_PYTHON to an interpreter with the packages of requirements.txt");
    } else {
      add("python", "interpreter", "ok",
          py["interpreter"].get<std::string>() + " (" + py["python"]["version"].get<std::string>() + ", from " +
              py["found_via"].get<std::string>() + ")");
      for (const Json& p : py["packages"]) {
        const bool ok = p.value("ok", false);
        std::string detail = p["module"].get<std::string>();
        if (ok && p.contains("version") && p["version"].is_string()) detail += " " + p["version"].get<std::string>();
        detail += ": " + p["why"].get<std::string>();
        if (!ok) detail += " (" + p.value("error", std::string("not importable")) + ")";
        add("python", p["module"].get<std::string>(), ok ? "ok" : "missing", detail,
            ok ? "" : p.value("install", std::string()));
      }
    }
  }

  // --- GPU ---
  if (h.gpus.empty()) {
    add("gpu", "gpu", "missing", h.gpu_note, "none needed: ferry's backends run on the CPU today");
  } else {
    for (size_t i = 0; i < h.gpus.size(); ++i) {
      const env::GpuInfo& g = h.gpus[i];
      std::string detail = g.name;
      if (!g.driver.empty()) detail += ", driver " + g.driver;
      if (g.memory_mib > 0) detail += ", " + human_bytes(g.memory_mib * 1024 * 1024);
      detail += " (" + g.source + "); ferry does not use GPUs yet";
      add("gpu", "gpu" + std::to_string(i), "ok", detail);
    }
  }

  if (o.json) {
    Json j;
    j["ferry"] = {{"version", kVersion}, {"kernels_isa", isa_name(host_isa())}};
    j["cpu"] = {{"vendor", h.cpu_vendor},
                {"model", h.cpu_model},
                {"logical_cpus", h.logical_cpus},
                {"physical_cores", h.physical_cores},
                {"sockets", h.sockets},
                {"usable_cpus", h.usable_cpus},
                {"cgroup_cpu_limit", h.cgroup_cpu_limit ? Json(*h.cgroup_cpu_limit) : Json(nullptr)}};
    Json isa = Json::object();
    for (const env::IsaFlag& f : h.isa)
      isa[f.name] = {{"usable", f.usable},
                     {"cpuid", f.cpuid},
                     {"proc_cpuinfo", f.proc_cpuinfo ? Json(*f.proc_cpuinfo) : Json(nullptr)}};
    j["isa"] = isa;
    j["memory"] = {{"total_bytes", h.mem_total_bytes},
                   {"available_bytes", h.mem_available_bytes},
                   {"cgroup_limit_bytes",
                    h.cgroup_memory_limit_bytes ? Json(*h.cgroup_memory_limit_bytes) : Json(nullptr)}};
    j["os"] = {{"name", h.os}, {"kernel", h.kernel}, {"arch", h.arch}};
    j["libraries"] = {{"onednn", lib.onednn},
                      {"onednn_max_isa", lib.onednn_max_isa},
                      {"ONEDNN_MAX_CPU_ISA", max_isa_env.empty() ? Json(nullptr) : Json(max_isa_env)},
                      {"protobuf", lib.protobuf},
                      {"onnx", lib.onnx},
                      {"compiler", lib.compiler},
                      {"openmp_max_threads", lib.openmp_max_threads}};
    j["python"] = py;
    Json gpus = Json::array();
    for (const env::GpuInfo& g : h.gpus)
      gpus.push_back({{"name", g.name},
                      {"driver", g.driver},
                      {"memory_mib", g.memory_mib > 0 ? Json(g.memory_mib) : Json(nullptr)},
                      {"source", g.source}});
    j["gpus"] = gpus;
    Json cs = Json::array();
    for (const Check& c : checks)
      cs.push_back({{"section", c.section}, {"name", c.name}, {"status", c.status}, {"detail", c.detail},
                    {"fix", c.fix}});
    j["checks"] = cs;
    std::cout << dump_json(j) << std::endl;
    return kExitOk;
  }

  std::string section;
  int ok = 0, missing = 0;
  for (const Check& c : checks) {
    if (c.section != section) {
      section = c.section;
      std::cout << (section == "machine" ? "" : "\n") << section << "\n";
    }
    std::string name = c.name;
    name.resize(std::max<size_t>(name.size(), 14), ' ');
    std::string status = c.status;
    status.resize(8, ' ');
    std::cout << "  " << status << name << c.detail << "\n";
    if (!c.fix.empty()) std::cout << "          " << std::string(14, ' ') << "-> " << c.fix << "\n";
    (c.status == "ok" ? ok : missing) += 1;
  }
  std::cout << "\n" << ok << " ok, " << missing << " missing or warnings\n";
  return kExitOk;
}

}  // namespace

Action add_env_command(CLI::App& app) {
  auto opts = std::make_shared<EnvOptions>();
  CLI::App* sub = app.add_subcommand(
      "env", "Check this machine for ferry: CPU and ISA flags, memory, OS, libraries, frameworks, GPU");
  sub->footer(
      "ISA flags come from CPUID (usable only when the OS enables their registers) and are cross-checked\n"
      "with /proc/cpuinfo. Frameworks are imported for real by `python -m ferry.env_check` through the\n"
      "Python bridge (FERRY_PYTHON, else the repository's .venv, else python3). Details: docs/evaluate.md.");
  sub->add_flag("--json", opts->json, "print the report as JSON");
  sub->add_flag("--no-python", opts->no_python, "skip the Python frameworks (no interpreter started)");
  return [opts] { return run_env(*opts); };
}

}  // namespace ferry::cli
