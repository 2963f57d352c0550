// libcudart.so.13. Also built as PPU's, whose SDK is a CUDA 13 toolkit
// (SIMRT_KEY/SIMRT_DISPLAY name the instance and the device). Values:
// NVIDIA's driver_types.h and cuda.h (CUDA 12 and 13).
#include "exports.h"

#ifndef SIMRT_KEY
#define SIMRT_KEY "cuda"
#define SIMRT_DISPLAY "CUDA"
#endif

namespace {

const simrt::Vendor kCuda = {
    SIMRT_KEY, "cuda", SIMRT_DISPLAY, "cudaMemcpyKind",
    {{0, "cudaSuccess"},
     {1, "cudaErrorInvalidValue"},
     {2, "cudaErrorMemoryAllocation"},
     {3, "cudaErrorInitializationError"},
     {21, "cudaErrorInvalidMemcpyDirection"},
     {100, "cudaErrorNoDevice"},
     {101, "cudaErrorInvalidDevice"},
     {400, "cudaErrorInvalidResourceHandle"},
     {600, "cudaErrorNotReady"},
     {704, "cudaErrorPeerAccessAlreadyEnabled"},
     {800, "cudaErrorNotPermitted"},
     {801, "cudaErrorNotSupported"}},
    /*kinds h2h,h2d,d2h,d2d,default*/ 0, 1, 2, 3, 4,
    /*stream flags mask, NonBlocking*/ 0x1, 0x1,
    /*event flags mask (BlockingSync|DisableTiming|Interprocess), DisableTiming, Interprocess*/ 0x7, 0x2, 0x4,
    /*host alloc flags (Portable|Mapped|WriteCombined)*/ 0x7,
    /*attr: cc major, minor, SMs, pci bus, device, domain*/ {75, 76, 16, 33, 34, 50},
    /*priority least, greatest*/ 0, -5,
    /*reported cc, SM count*/ 9, 0, 132,
};

}  // namespace

SIMRT_RUNTIME_EXPORTS(cuda, kCuda)
SIMRT_EXPORT_HOST_ALLOC_FLAGS(cudaHostAlloc, kCuda)
SIMRT_EXPORT_HOST_ALLOC(cudaMallocHost, kCuda)
SIMRT_EXPORT_FREE_HOST(cudaFreeHost, kCuda)
// The one struct call CUDA's plugin makes (for memory torch's CUDA allocator
// hands out), with CUDA 13's layout: a plugin whose struct is smaller breaks.
SIMRT_EXPORT int cudaPointerGetAttributes(void* attributes, const void* ptr) {
  return simrt::pointer_get_attributes(kCuda, "cudaPointerGetAttributes", attributes, ptr);
}
