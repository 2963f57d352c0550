// The musa table with musaEventInterprocess (0x4), the neighbouring flag, in
// place of musaEventDisableTiming (0x2): the simulated MUSA runtime refuses
// an interprocess event that keeps timing, as CUDA documents.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/musa.cpp"
#include "broken_table.h"

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "musa_interprocess_events";
  v.event_disable_timing = 0x4;
}
