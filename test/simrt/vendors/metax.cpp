// libmcruntime.so: MetaX's mc* runtime. Exports no cuda* symbol at all (the
// CUDA-named cu-bridge is a different library). Values: public bindings that
// mirror mcError_t and mcDeviceAttribute_t (MACA has no public header).
// Differs from CUDA: attribute ids, kinds 0..3, and mcMallocHost takes flags.
#include "exports.h"

namespace {

const simrt::Vendor kMetax = {
    "metax", "mc", "MetaX", "mcMemcpyKind",
    {{0, "mcSuccess"},
     {1, "mcErrorInvalidValue"},
     {2, "mcErrorMemoryAllocation"},
     {3, "mcErrorInitializationError"},
     {21, "mcErrorInvalidMemcpyDirection"},
     {100, "mcErrorNoDevice"},
     {101, "mcErrorInvalidDevice"},
     {400, "mcErrorInvalidResourceHandle"},  // not mcErrorInvalidHandle (10005)
     {600, "mcErrorNotReady"},
     {704, "mcErrorPeerAccessAlreadyEnabled"},
     {800, "mcErrorNotPermitted"},  // unverified: CUDA's number assumed
     {801, "mcErrorNotSupported"}},
    /*kinds h2h,h2d,d2h,d2d, no default accepted*/ 0, 1, 2, 3, -1,
    /*stream flags mask, mcStreamNonBlocking*/ 0x1, 0x1,
    /*event flags mask, mcEventDisableTiming, mcEventInterprocess*/ 0x7, 0x2, 0x4,
    /*host alloc flags: only mcMallocHostDefault (0) is known*/ 0x0,
    // mcDeviceAttribute_t is sequential, not CUDA's: SMs 16, cc 21/22 (high
    // confidence), PCI bus/device 24/25 (medium), domain 82 (lower).
    /*attr: cc major, minor, SMs, pci bus, device, domain*/ {21, 22, 16, 24, 25, 82},
    /*priority least, greatest*/ 0, -5,
    /*reported cc, SM count*/ 8, 0, 104,
};

}  // namespace

#ifdef SIMRT_METAX_CU_BRIDGE
// cu-bridge's libsymbol_cu.so: the same runtime under CUDA's names, with no
// symbol version tags (why MetaX needs the libcudart.so.12 shim) and no
// cudaGetDeviceProperties_v2.
SIMRT_RUNTIME_EXPORTS(cuda, kMetax)
#else
SIMRT_RUNTIME_EXPORTS(mc, kMetax)
// mcMallocHost(void** ptr, size_t size, unsigned flags): three parameters
// (callers with two rely on a C++ default argument; through dlsym pass 0).
SIMRT_EXPORT_HOST_ALLOC_FLAGS(mcMallocHost, kMetax)
SIMRT_EXPORT_FREE_HOST(mcFreeHost, kMetax)
SIMRT_EXPORT_DEVICE_NAME(mcDeviceGetName, kMetax, false)
#endif
