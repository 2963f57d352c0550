// The gcu table without its adapter: streams by the CUDA-shaped
// StreamCreateWithPriority, which TopsRider does not export. The plugin must
// refuse the runtime naming the missing call, not fail later.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/gcu.cpp"
#include "broken_table.h"

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "gcu_priority_streams";
  v.adapt = nullptr;
}
