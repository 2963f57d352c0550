// The musa vendor table with the host-to-device and device-to-host copy
// kinds swapped: a plugin built with a wrong enum value. Conformance on the
// simulated MUSA runtime must fail, naming the rule the runtime enforces.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/musa.cpp"
#include "broken_table.h"

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "musa_swapped_kinds";
  v.memcpy_kind[1] = 2;  // FLAGOS_MEMCPY_HOST_TO_DEVICE as musaMemcpyDeviceToHost
  v.memcpy_kind[2] = 1;
}
