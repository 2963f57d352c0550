// Hygon DCU: HIP from DTK, libgalaxyhip.so.5 under $ROCM_PATH/hip/lib (DTK
// installs to /opt/dtk). Calls and values from ROCm's hip_runtime_api.h
// (identical in ROCm 5.x and 6.x; DTK forks an older HIP, unverified on
// hardware). HIP's attribute ids are its own, not CUDA's. DTK's CUDA shim
// (libcudart.so.12 over HIP) is not used: the hip* calls are the real API.
#include "../vendor.h"

namespace flagos_cudalike {
namespace {

const char* const kRuntime[] = {"libgalaxyhip.so.5", "libgalaxyhip.so", nullptr};
const char* const kEnv[] = {"ROCM_PATH", nullptr};
const char* const kSubdirs[] = {"hip/lib", "lib", nullptr};
const char* const kFixed[] = {"/opt/dtk/hip/lib", "/opt/dtk/lib", nullptr};
// RCCL: NCCL's API and enum values under NCCL's names (ROCm/rccl
// src/nccl.h.in); where DTK installs it is unverified on hardware.
const char* const kComm[] = {"librccl.so.1", "librccl.so", nullptr};
const char* const kCommSubdirs[] = {"rccl/lib", "lib", nullptr};
const char* const kCommFixed[] = {"/opt/dtk/rccl/lib", "/opt/dtk/lib", nullptr};

const Vendor kDcu = {
    "dcu", "Hygon DCU (HIP)", "hip",
    {kRuntime, kEnv, kSubdirs, nullptr, kFixed, true, false},
    {nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    nullptr, nullptr,
    "hipHostMalloc", 0x1 /* hipHostMallocPortable */, "hipHostFree",
    "hipDeviceGetName", "hipDeviceTotalMem",
    nullptr,
    {0, 1, 2, 3},  // hipMemcpyHostToHost .. DeviceToDevice
    0x1 /* hipStreamNonBlocking */, 0x2 /* hipEventDisableTiming */,
    23, 61, 63, 69, 67, 68,  // hipDeviceAttributeComputeCapabilityMajor/Minor, MultiprocessorCount, PciDomainID/BusId/DeviceId
    "gfx%d%d",               // approximate: the exact gcnArchName is only in the properties struct
    600 /* hipErrorNotReady */, kCudaNumberedErrors,
    false,  // CUDA_ABI only with DTK's torch, which is not wired yet
    true,  // searched first in FLAGOS_VENDOR_TORCH_LIB
    {kComm, kEnv, kCommSubdirs, nullptr, kCommFixed, true, false}, "nccl",
};

}  // namespace

const Vendor& vendor() { return kDcu; }

}  // namespace flagos_cudalike
