// The cuda layer drops cudaStreamWaitEvent (returns success without calling
// it): nothing the runtime can refuse, so conformance's ordering checks must
// find work on the waiting stream running before the event's work finished
// (the stream rule).
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/cuda.cpp"
#define FLAGOS_BROKEN_NAME "cuda_skips_stream_wait"
#include "broken_layer.h"

FLAGOS_BREAK_CALL(stream_wait_event,
                  [](flagos_cudalike::rt_stream, flagos_cudalike::rt_event, unsigned) -> int { return 0; })
