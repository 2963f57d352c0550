// libmusart.so: a one-for-one rename of the CUDA runtime. Values: public
// copies of the MUSA SDK's driver_types.h (CUDA numbering).
// Differs from CUDA: memcpy kinds 0..3 only (no musaMemcpyDefault), and
// musaMallocHost has no flags variant.
#include "exports.h"

namespace {

const simrt::Vendor kMusa = {
    "musa", "musa", "MUSA", "musaMemcpyKind",
    {{0, "musaSuccess"},
     {1, "musaErrorInvalidValue"},
     {2, "musaErrorMemoryAllocation"},
     {3, "musaErrorInitializationError"},
     {21, "musaErrorInvalidMemcpyDirection"},
     {100, "musaErrorNoDevice"},
     {101, "musaErrorInvalidDevice"},
     {400, "musaErrorInvalidResourceHandle"},
     {600, "musaErrorNotReady"},
     {704, "musaErrorPeerAccessAlreadyEnabled"},
     {800, "musaErrorNotPermitted"},  // unverified: CUDA's number assumed
     {801, "musaErrorNotSupported"}},
    /*kinds h2h,h2d,d2h,d2d, no default*/ 0, 1, 2, 3, -1,
    /*stream flags mask, NonBlocking (unverified, CUDA's)*/ 0x1, 0x1,
    /*event flags mask, DisableTiming, Interprocess (unverified, CUDA's)*/ 0x7, 0x2, 0x4,
    /*host alloc flags: musaMallocHost takes none*/ 0x0,
    /*attr*/ {75, 76, 16, 33, 34, 50},
    /*priority least, greatest*/ 0, -5,
    /*reported cc, SM count*/ 2, 2, 128,
};

}  // namespace

SIMRT_RUNTIME_EXPORTS(musa, kMusa)
SIMRT_EXPORT_HOST_ALLOC(musaMallocHost, kMusa)
SIMRT_EXPORT_FREE_HOST(musaFreeHost, kMusa)
