// env/host_info.h against what Linux says about the same machine.
#include "env/host_info.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include <oneapi/dnnl/dnnl.h>

namespace ferry::env {
namespace {

std::set<std::string> proc_flags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      std::set<std::string> out;
      for (std::string w; words >> w;) out.insert(w);
      return out;
    }
  return {};
}

TEST(HostInfo, IsaFlagsAgreeWithProcCpuinfo) {
  const std::set<std::string> flags = proc_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags";
  const std::vector<IsaFlag> isa = read_isa_flags();
  ASSERT_EQ(isa.size(), 16u);
  for (const IsaFlag& f : isa) {
    ASSERT_TRUE(f.proc_cpuinfo.has_value());
    EXPECT_EQ(*f.proc_cpuinfo, flags.count(f.name) == 1) << f.name;
    EXPECT_EQ(f.usable, flags.count(f.name) == 1) << f.name << ": CPUID + XGETBV disagree with the kernel";
    EXPECT_TRUE(!f.usable || f.cpuid) << f.name;
  }
}

TEST(HostInfo, MachineFacts) {
  const HostInfo h = read_host_info();
  EXPECT_EQ(h.logical_cpus, int(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GE(h.logical_cpus, h.usable_cpus);
  EXPECT_GT(h.usable_cpus, 0);
  EXPECT_FALSE(h.cpu_model.empty());
  EXPECT_GT(h.mem_total_bytes, 0);
  EXPECT_LE(h.mem_available_bytes, h.mem_total_bytes);
  EXPECT_FALSE(h.kernel.empty());
  EXPECT_FALSE(h.os.empty());
}

TEST(HostInfo, LibraryVersions) {
  const LibraryVersions v = read_library_versions();
  const dnnl_version_t* d = dnnl_version();
  EXPECT_EQ(v.onednn.rfind(std::to_string(d->major) + "." + std::to_string(d->minor) + ".", 0), 0u) << v.onednn;
  EXPECT_EQ(v.protobuf.find('.') != std::string::npos, true);
  EXPECT_GE(v.openmp_max_threads, 1);
  EXPECT_EQ(onednn_isa_name(dnnl_cpu_isa_avx2), "AVX2");
  EXPECT_EQ(onednn_isa_name(dnnl_cpu_isa_avx512_core_amx), "AVX512_CORE_AMX");
  EXPECT_EQ(onednn_isa_name(0x12345), "0x12345");
}

}  // namespace
}  // namespace ferry::env
