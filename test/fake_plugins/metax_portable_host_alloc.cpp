// The metax table passing CUDA's cudaHostAllocPortable (0x1) to mcMallocHost,
// whose only documented flag is mcMallocHostDefault (0): the simulated MACA
// runtime refuses the pinned allocation, naming the valid flags.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/metax.cpp"
#include "broken_table.h"

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "metax_portable_host_alloc";
  v.host_alloc_flags = 0x1;
}
