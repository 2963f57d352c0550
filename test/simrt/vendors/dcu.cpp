// libgalaxyhip.so.5: Hygon DTK's HIP. Values: ROCm/HIP hip_runtime_api.h,
// and driver_types.h, identical across ROCm 5.0-6.2; that DTK's
// older HIP matches is unverified. Differs from CUDA: attribute ids, priority
// range, error names, hipHostMalloc flags, and no NotPermitted code.
#include <cstdlib>

#include "exports.h"

namespace {

const simrt::Vendor kHip = {
    "dcu", "hip", "DCU", "hipMemcpyKind",
    {{0, "hipSuccess"},
     {1, "hipErrorInvalidValue"},
     {2, "hipErrorOutOfMemory"},
     {3, "hipErrorNotInitialized"},
     {21, "hipErrorInvalidMemcpyDirection"},
     {100, "hipErrorNoDevice"},
     {101, "hipErrorInvalidDevice"},
     {400, "hipErrorInvalidHandle"},
     {600, "hipErrorNotReady"},
     {704, "hipErrorPeerAccessAlreadyEnabled"},
     // hipError_t has no NotPermitted; a runtime call from a host function
     // gets hipErrorNotSupported here (what real HIP returns is unverified).
     {801, "hipErrorNotSupported"},
     {801, "hipErrorNotSupported"}},
    /*kinds h2h,h2d,d2h,d2d,default*/ 0, 1, 2, 3, 4,
    /*stream flags mask, hipStreamNonBlocking*/ 0x1, 0x1,
    /*event flags: BlockingSync|DisableTiming|Interprocess|DisableSystemFence|
      ReleaseToDevice|ReleaseToSystem; hipEventDisableTiming, hipEventInterprocess*/ 0xE0000007u, 0x2, 0x4,
    /*hipHostMalloc: Portable|Mapped|WriteCombined|NumaUser|Coherent|NonCoherent*/ 0xE0000007u,
    // ---- HIP device attribute ids: hipDeviceAttribute_t, ROCm >= 5.0 ----
    /*attr: cc major, minor, SMs, pci bus, device, domain*/ {23, 61, 63, 67, 68, 69},
    /*priority least, greatest*/ 0, -1,
    /*reported cc, CU count*/ 9, 2, 80,
};

}  // namespace

SIMRT_RUNTIME_EXPORTS(hip, kHip)
SIMRT_EXPORT_HOST_ALLOC_FLAGS(hipHostMalloc, kHip)
SIMRT_EXPORT_FREE_HOST(hipHostFree, kHip)
SIMRT_EXPORT_DEVICE_NAME(hipDeviceGetName, kHip, false)
SIMRT_EXPORT_TOTAL_MEM(hipDeviceTotalMem, kHip, false)

// HIP_VERSION's encoding, major * 10000000 + minor * 100000 + patch;
// SIMRT_HIP_VERSION sets it (default 6.2.41134, a DTK 25.04-era HIP).
SIMRT_EXPORT int hipRuntimeGetVersion(int* version) {
  if (version == nullptr) return 1;  // hipErrorInvalidValue
  const char* given = std::getenv("SIMRT_HIP_VERSION");
  *version = given != nullptr ? std::atoi(given) : 60241134;
  return 0;
}
