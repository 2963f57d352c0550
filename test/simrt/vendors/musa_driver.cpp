// libmusa.so: the MUSA driver calls (MUresult = CUDA numbering; MUdevice int).
#include "exports.h"

namespace {

const simrt::Vendor kMu = {
    "musa", "mu", "MUSA", "",
    {{0, "MUSA_SUCCESS"},
     {1, "MUSA_ERROR_INVALID_VALUE"},
     {2, "MUSA_ERROR_OUT_OF_MEMORY"},
     {3, "MUSA_ERROR_NOT_INITIALIZED"},
     {21, nullptr},
     {100, "MUSA_ERROR_NO_DEVICE"},
     {101, "MUSA_ERROR_INVALID_DEVICE"},
     {400, "MUSA_ERROR_INVALID_HANDLE"},
     {600, "MUSA_ERROR_NOT_READY"},
     {704, "MUSA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
     {800, "MUSA_ERROR_NOT_PERMITTED"},
     {801, "MUSA_ERROR_NOT_SUPPORTED"}},
    0, 1, 2, 3, -1, 0x1, 0x1, 0x7, 0x2, 0x4, 0x0, {75, 76, 16, 33, 34, 50}, 0, -5, 2, 2, 128,
};

}  // namespace

SIMRT_DRIVER_EXPORTS(mu, kMu)
// Public hook libraries define both names with size_t*; unverified on hardware.
SIMRT_EXPORT_TOTAL_MEM(muDeviceTotalMem, kMu, true)
SIMRT_EXPORT_TOTAL_MEM(muDeviceTotalMem_v2, kMu, true)
