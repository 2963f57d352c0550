// The dcu table with its two neighbouring flag values swapped: 0x2 as
// hipStreamNonBlocking and 0x1 as hipEventDisableTiming. The simulated HIP
// runtime refuses the stream flag, naming the valid mask.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/dcu.cpp"
#include "broken_table.h"

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "dcu_swapped_stream_event_flags";
  v.stream_non_blocking = 0x2;
  v.event_disable_timing = 0x1;  // hipEventBlockingSync: valid, so the stream flag is what fails
}
