// MetaX MACA: mc* in libmcruntime.so under $MACA_PATH (or $MACA_HOME,
// /opt/maca). No public header: error codes mirror CUDA's except
// mcErrorInvalidHandle; attribute ids are MACA's own (not CUDA's, not
// HIP's), from public bindings of mcDeviceAttribute_t; the PCI domain id
// and every value here are unverified on hardware.
#include "../vendor.h"

namespace flagos_cudalike {
namespace {

const char* const kRuntime[] = {"libmcruntime.so", nullptr};
const char* const kEnv[] = {"MACA_PATH", "MACA_HOME", nullptr};
const char* const kSubdirs[] = {"lib", nullptr};
const char* const kFixed[] = {"/opt/maca/lib", nullptr};
// MCCL, MetaX's NCCL derivative: mccl* in libmccl.so (FlagCX's metax
// adaptor calls mcclGetUniqueId and friends; vLLM-MetaX loads libmccl.so).
// NCCL's argument lists and enum values assumed, unverified on hardware.
const char* const kComm[] = {"libmccl.so", nullptr};

const ErrorCode kMetaxErrors[] = {
    {10005, FLAGOS_ERROR_INVALID_HANDLE},  // mcErrorInvalidHandle
    {2, FLAGOS_ERROR_OUT_OF_MEMORY},       {1, FLAGOS_ERROR_INVALID_ARGUMENT},
    {17, FLAGOS_ERROR_INVALID_ARGUMENT},   {21, FLAGOS_ERROR_INVALID_ARGUMENT},
    {101, FLAGOS_ERROR_INVALID_DEVICE},    {400, FLAGOS_ERROR_INVALID_HANDLE},
    {801, FLAGOS_ERROR_UNSUPPORTED},       {100, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},
    {3, FLAGOS_ERROR_RUNTIME_UNAVAILABLE}, {800, FLAGOS_ERROR_INVALID_STATE},
    {700, FLAGOS_ERROR_DEVICE_LOST},       {719, FLAGOS_ERROR_DEVICE_LOST},
    {0, FLAGOS_SUCCESS},
};

const Vendor kMetax = {
    "metax", "MetaX MACA", "mc",
    {kRuntime, kEnv, kSubdirs, nullptr, kFixed, true, false},
    {nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    nullptr, nullptr,
    "mcMallocHost", 0x0 /* mcMallocHostDefault: the call takes flags */, "mcFreeHost",
    "mcDeviceGetName", nullptr,  // total memory: mcMemGetInfo in the probe
    nullptr,
    {0, 1, 2, 3},
    0x1 /* mcStreamNonBlocking */, 0x2 /* mcEventDisableTiming */,
    21, 22, 16, 82, 24, 25,  // ComputeCapabilityMajor/Minor, MultiProcessorCount, PciDomain/Bus/DeviceId
    "maca_%d.%d",
    600 /* mcErrorNotReady */, kMetaxErrors,
    false,  // CUDA_ABI only with MetaX's torch, which is not wired yet
    true,  // searched first in FLAGOS_VENDOR_TORCH_LIB
    {kComm, kEnv, kSubdirs, nullptr, kFixed, true, false}, "mccl",
};

}  // namespace

const Vendor& vendor() { return kMetax; }

}  // namespace flagos_cudalike
