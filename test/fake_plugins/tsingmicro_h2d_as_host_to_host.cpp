// The tsingmicro table with host-to-device copies sent as
// txMemcpyHostToHost (0): a plugin that hands the runtime a host-to-host
// copy, which txMemcpyAsync rejects (the layer copies host memory itself, so
// only a wrong kind value can reach it). Conformance on the simulated Kuiper
// runtime must fail, naming the rule.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/tsingmicro.cpp"
#include "broken_table.h"

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "tsingmicro_h2d_as_host_to_host";
  v.memcpy_kind[1] = 0;  // FLAGOS_MEMCPY_HOST_TO_DEVICE as txMemcpyHostToHost
}
