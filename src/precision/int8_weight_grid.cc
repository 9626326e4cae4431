#include "precision/int8_weight_grid.h"

#include <vector>

#include <oneapi/dnnl/dnnl.h>

#include "env/host_info.h"

namespace ferry {

bool host_has_int8_dot_product() {
  static const bool has = [] {
    for (const env::IsaFlag& f : env::read_isa_flags())
      if ((f.name == "amx_int8" || f.name == "avx512_vnni" || f.name == "avx_vnni") && f.usable) {
        // oneDNN must also be allowed to use it (ONEDNN_MAX_CPU_ISA): its VNNI bits.
        const unsigned isa = unsigned(dnnl_get_effective_cpu_isa());
        return (isa & unsigned(dnnl_cpu_isa_avx512_core_vnni)) == unsigned(dnnl_cpu_isa_avx512_core_vnni) ||
               (isa & unsigned(dnnl_cpu_isa_avx2_vnni)) == unsigned(dnnl_cpu_isa_avx2_vnni);
      }
    return false;
  }();
  return has;
}

int int8_weight_qmax() { return host_has_int8_dot_product() ? 127 : 63; }

}  // namespace ferry
