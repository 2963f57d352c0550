// The dcu layer frees the pointer it handed out plus an alignment offset, as
// a layer that rounds allocations up and frees the rounded pointer would:
// the simulated HIP runtime refuses hipFree of a pointer that does not start
// an allocation (the pointer rule).
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/dcu.cpp"
#define FLAGOS_BROKEN_NAME "dcu_frees_interior_pointer"
#include "broken_layer.h"

FLAGOS_BREAK_CALL(free, [](void* p) -> int { return original(p == nullptr ? p : static_cast<char*>(p) + 256); })
