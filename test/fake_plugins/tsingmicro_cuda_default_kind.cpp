// The tsingmicro table with device-to-device copies sent as CUDA's
// cudaMemcpyDefault (4), as a port from CUDA might: txMemcpyKind has only
// 0..3. Conformance on the simulated Kuiper runtime must fail, naming the rule.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/tsingmicro.cpp"
#include "broken_table.h"

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "tsingmicro_cuda_default_kind";
  v.memcpy_kind[3] = 4;  // FLAGOS_MEMCPY_DEVICE_TO_DEVICE as cudaMemcpyDefault
}
